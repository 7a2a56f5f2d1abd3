import { spawn } from 'node:child_process';
import { createServer, request } from 'node:http';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROOT } from '../helpers/cli.js';
import { startDemoGateway } from '../helpers/gateway-fixture.js';
import type { DemoGateway } from '../helpers/gateway-fixture.js';

/**
 * The official MCP conformance suite (@modelcontextprotocol/conformance) against `/mcp`, for the
 * scenarios a gateway serves whatever its tools are. The suite sends no credentials, so a small
 * proxy in front adds the demo agent's bearer token and maps its own port to the gateway's in
 * `Host` and `Origin` (a foreign Host or Origin passes through unchanged, for the rebinding check).
 */
const SCENARIOS = [
  'server-initialize',
  'ping',
  'tools-list',
  'resources-list',
  'prompts-list',
  'dns-rebinding-protection',
];
const SUITE = `${ROOT}node_modules/@modelcontextprotocol/conformance/dist/index.js`;

let g: DemoGateway;
let proxy: Server;
let proxyUrl: string;

beforeAll(async () => {
  g = await startDemoGateway({ listen: true });
  const target = new URL(g.url!);
  proxy = createServer((req, res) => {
    const own = (value: string | undefined) =>
      value?.replace(`:${(proxy.address() as AddressInfo).port}`, `:${target.port}`);
    const headers = {
      ...req.headers,
      authorization: `Bearer ${g.tokens.agent}`,
      host: own(req.headers.host),
      ...(req.headers.origin ? { origin: own(req.headers.origin) } : {}),
    };
    const upstream = request(
      { host: target.hostname, port: target.port, path: req.url, method: req.method, headers },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      },
    );
    upstream.on('error', (err) => res.writeHead(502).end(String(err)));
    req.pipe(upstream);
  });
  await new Promise<void>((ok) => proxy.listen(0, '127.0.0.1', ok));
  proxyUrl = `http://127.0.0.1:${(proxy.address() as AddressInfo).port}/mcp`;
});
afterAll(async () => {
  proxy?.closeAllConnections();
  await new Promise<void>((ok) => (proxy ? proxy.close(() => ok()) : ok()));
  await g?.close();
});

function conformance(scenario: string): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve) => {
    const child = spawn(
      process.execPath,
      [SUITE, 'server', '--url', proxyUrl, '--scenario', scenario],
      { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, NO_COLOR: '1' } },
    );
    let output = '';
    child.stdout.on('data', (d: Buffer) => (output += d.toString()));
    child.stderr.on('data', (d: Buffer) => (output += d.toString()));
    child.on('close', (code) => resolve({ code, output }));
  });
}

describe('the official MCP conformance suite against /mcp', () => {
  for (const scenario of SCENARIOS) {
    it(`passes ${scenario}`, async () => {
      const { code, output } = await conformance(scenario);
      expect(output).toMatch(/SUCCESS/);
      expect(output).not.toMatch(/FAILURE|WARNING/);
      expect(code, output).toBe(0);
    });
  }
});
