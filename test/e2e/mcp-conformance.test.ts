import { spawn } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildFixture } from '../fixtures/build-fixture.js';
import { addAgent } from '../helpers/agents.js';
import { ROOT } from '../helpers/cli.js';
import { startDemoGateway } from '../helpers/gateway-fixture.js';
import type { DemoGateway } from '../helpers/gateway-fixture.js';
import { freePort } from '../helpers/ports.js';
import { startReverseProxy } from '../helpers/reverse-proxy.js';
import type { ReverseProxy } from '../helpers/reverse-proxy.js';

/**
 * The official MCP conformance suite (@modelcontextprotocol/conformance) against `/mcp`: every
 * server scenario. Behind the gateway stands test/fixtures/conformance-server.ts, which offers the
 * tools, resources and prompts the scenarios ask for; its tools are bound and pinned by an agent
 * release that keeps upstream names, so the suite finds them under their own. The suite sends no
 * credentials, so a reverse proxy in front adds that agent's bearer token; it passes `Host` and
 * `Origin` on as they came, as a real proxy does, and the gateway's public URL is the proxy's (a
 * foreign Host or Origin is refused, for the rebinding check).
 */
const SUITE = `${ROOT}node_modules/@modelcontextprotocol/conformance/dist/index.js`;
/** The suite's server scenarios, as `conformance list` names them. */
const SCENARIOS = [
  'server-initialize',
  'logging-set-level',
  'ping',
  'completion-complete',
  'tools-list',
  'tools-call-simple-text',
  'tools-call-image',
  'tools-call-audio',
  'tools-call-embedded-resource',
  'tools-call-mixed-content',
  'tools-call-with-logging',
  'tools-call-error',
  'tools-call-with-progress',
  'tools-call-sampling',
  'tools-call-elicitation',
  'json-schema-2020-12',
  'elicitation-sep1034-defaults',
  'server-sse-polling',
  'server-sse-multiple-streams',
  'elicitation-sep1330-enums',
  'resources-list',
  'resources-read-text',
  'resources-read-binary',
  'resources-templates-read',
  'resources-subscribe',
  'resources-unsubscribe',
  'prompts-list',
  'prompts-get-simple',
  'prompts-get-with-args',
  'prompts-get-embedded-resource',
  'prompts-get-with-image',
  'dns-rebinding-protection',
];
/** The fixture's tools: each bound as a `read` tool `conformance/<tool>@1.0.0`. */
const TOOLS = [
  'test_simple_text',
  'test_image_content',
  'test_audio_content',
  'test_embedded_resource',
  'test_multiple_content_types',
  'test_tool_with_logging',
  'test_tool_with_progress',
  'test_error_handling',
  'test_sampling',
  'test_elicitation',
  'test_elicitation_sep1034_defaults',
  'test_elicitation_sep1330_enums',
  'test_reconnection',
  'json_schema_2020_12_tool',
];

let g: DemoGateway;
let proxy: ReverseProxy;
let proxyUrl: string;
let token: string;

beforeAll(async () => {
  const proxyPort = await freePort();
  g = await startDemoGateway({
    listen: true,
    config: { reach: { publicUrl: `http://127.0.0.1:${proxyPort}` } },
  });
  const mcp = g.gateway.mcp;
  const server = await mcp.register('acme', 'test', {
    name: 'conformance',
    transport: {
      type: 'stdio',
      command: process.execPath,
      args: [buildFixture('conformance-server')],
    },
  });
  await mcp.verify('acme', server.id, 'test');
  for (const tool of TOOLS) {
    const id = `conformance/${tool}`;
    const { descriptor } = await mcp.bind('acme', server.id, 'test', {
      tool,
      class: 'read',
      descriptor: { id, version: '1.0.0' },
    });
    await g.gateway.registry.applyEvents(
      'acme',
      [
        {
          id: `test:${id}@1.0.0`,
          type: 'AssetReleasePublished',
          data: { assetId: id, version: '1.0.0', descriptor, inFlightPolicy: 'finish' },
        },
      ],
      'test',
    );
  }
  await mcp.activate('acme', server.id, 'test');
  token = (
    await addAgent(
      g,
      'conformance',
      TOOLS.map((t) => ({ id: `conformance/${t}`, version: '1.0.0' })),
      'production',
      { mcp: { toolNames: 'upstream' } },
    )
  ).token;
  proxy = await startReverseProxy(
    g.url!,
    (headers) => ({ ...headers, authorization: `Bearer ${token}` }),
    proxyPort,
  );
  proxyUrl = `${proxy.url}/mcp`;
});
afterAll(async () => {
  await proxy?.close();
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

/** The ids of the checks a run reported as FAILURE or WARNING (its output may hold colour codes). */
function problems(output: string): string[] {
  // eslint-disable-next-line no-control-regex
  const plain = output.replace(/\x1b\[[0-9;]*m/g, '');
  return [...plain.matchAll(/^\S+ \[([\w$-]+)\s*\] (?:FAILURE|WARNING)\b/gm)].map((m) => m[1]!);
}

/**
 * The one scenario that warns, and exactly how. server-sse-polling posts its `tools/call` with
 * `MCP-Protocol-Version: 2025-03-26` and then expects a SEP-1699 priming event (an event id with
 * empty data) and a `retry` field on the answer stream. /mcp keeps every stream's events for
 * `Last-Event-ID` replay, so each event of that answer has an id; but the SDK's transport sends the
 * priming event (and its `retry`) only to a request declaring 2025-11-25 or later (its
 * `supportsEmptySSEData`: older clients fail on empty data), as the other official SDKs do. The
 * suite's own fix (it now sends 2025-11-25) came after 0.1.x; test/e2e/mcp-endpoint.test.ts checks
 * the priming event, the retry and the replay with a 2025-11-25 request.
 */
const KNOWN: Record<string, string[]> = {
  'server-sse-polling': ['server-sse-priming-event', 'server-sse-retry-field'],
};

/**
 * Scenarios whose tool call makes the upstream send a request back (sampling, elicitation): the
 * gateway forwards one only while a single call is in flight on the connection, so these run
 * alone, one after another.
 */
const ALONE = new Set([
  'tools-call-sampling',
  'tools-call-elicitation',
  'elicitation-sep1034-defaults',
  'elicitation-sep1330-enums',
]);

/** One scenario's test: it passes, or warns of exactly its known checks. */
function scenarioTest(scenario: string): [string, () => Promise<void>] {
  const known = KNOWN[scenario];
  return [
    known ? `runs ${scenario}, warning only of ${known.join(', ')}` : `passes ${scenario}`,
    async () => {
      const { code, output } = await conformance(scenario);
      if (known) {
        expect(problems(output), output).toEqual(known);
        expect(output).toMatch(/Received tool response on POST stream/);
        expect(output).toMatch(/Received SSE event \(id: \S+\)/);
        return;
      }
      expect(output).toMatch(/SUCCESS/);
      expect(problems(output), output).toEqual([]);
      expect(output).not.toMatch(/FAILURE|WARNING/);
      expect(code, output).toBe(0);
    },
  ];
}

describe('the official MCP conformance suite against /mcp', () => {
  // The other scenarios are independent sessions of one gateway: a few at once (each is a
  // process of the suite's own), to keep the file's time down.
  describe.concurrent('scenarios that may share the upstream connection', () => {
    for (const scenario of SCENARIOS.filter((s) => !ALONE.has(s))) it(...scenarioTest(scenario));
  });
  describe('scenarios whose upstream asks the agent back, one at a time', () => {
    for (const scenario of SCENARIOS.filter((s) => ALONE.has(s))) it(...scenarioTest(scenario));
  });
});
