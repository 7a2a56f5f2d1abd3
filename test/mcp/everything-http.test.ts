import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { resolve } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { GatewayEgress } from '../../src/egress/index.js';
import { freePort } from '../helpers/ports.js';
import { McpHarness, TENANT } from './mcp-harness.js';

const entry = resolve('node_modules/@modelcontextprotocol/server-everything/dist/index.js');

/** Starts server-everything over Streamable HTTP and resolves once it listens. */
function startHttp(port: number): Promise<ChildProcess> {
  const child = spawn(process.execPath, [entry, 'streamableHttp'], {
    env: { ...process.env, PORT: String(port) },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  return new Promise((ok, fail) => {
    const timer = setTimeout(() => fail(new Error('server-everything did not start')), 10_000);
    child.stderr.on('data', (d: Buffer) => {
      if (d.toString().includes('listening')) {
        clearTimeout(timer);
        ok(child);
      }
    });
    child.once('exit', () => fail(new Error('server-everything exited')));
  });
}

function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((ok) => {
    child.once('exit', () => ok());
    child.kill('SIGKILL');
  });
}

let h: McpHarness | undefined;
let upstream: ChildProcess | undefined;
afterEach(async () => {
  await h?.close();
  if (upstream) await stop(upstream);
  h = undefined;
  upstream = undefined;
});

describe('server-everything over Streamable HTTP', () => {
  it('calls echo; a killed server turns degraded after K probes and active when it returns', async () => {
    const port = await freePort();
    upstream = await startHttp(port);
    // Through the egress check, as the gateway wires it: the loopback address and port listed.
    const egress = new GatewayEgress({ allow: () => [`127.0.0.1:${port}`] });
    h = await McpHarness.open({
      failuresToDegrade: 2,
      requestTimeoutMs: 2_000,
      maxMessageBytes: 256 * 1024,
      maxMessageBytesSetting: 'THE_BOUND_SETTING',
      checkUrl: (url) => egress.check(url),
      connectHttp: (url) => egress.connect(url),
    });
    const { id, descriptors } = await h.ready(
      'everything-http',
      { type: 'http', url: `http://127.0.0.1:${port}/mcp` },
      [
        { tool: 'echo', class: 'read', id: 'everything.echo' },
        { tool: 'trigger-sampling-request', class: 'read', id: 'everything.sample' },
      ],
    );
    expect(await h.call(descriptors.echo!, { message: 'over http' })).toEqual({
      status: 'observed',
      output: { content: [{ type: 'text', text: 'Echo: over http' }] },
    });
    // An answer event over the message bound: the connection is closed and the call says why;
    // the next call connects afresh.
    const tooLarge = await h.call(descriptors.echo!, { message: 'y'.repeat(300_000) });
    expect(tooLarge).toMatchObject({ status: 'failed', code: 'UPSTREAM_MESSAGE_TOO_LARGE' });
    expect((tooLarge as { message: string }).message).toMatch(
      /over the 262144-byte bound .*\(THE_BOUND_SETTING\)/,
    );
    expect((await h.call(descriptors.echo!, { message: 'again' })).status).toBe('observed');

    // Two calls in flight on the one connection, each asked back by the server: each request came
    // on its call's own answer stream, so each goes to its own caller (neither answers until both
    // are asked, so both are in flight at once).
    const asked: string[] = [];
    let bothAsked!: () => void;
    const both = new Promise<void>((r) => (bothAsked = r));
    const callerNamed = (name: string) => ({
      ask: async ({ params }: { params: Record<string, unknown> }) => {
        asked.push(`${name}: ${JSON.stringify(params.messages)}`);
        if (asked.length === 2) bothAsked();
        await both;
        return {
          role: 'assistant',
          content: { type: 'text', text: `answer of ${name}` },
          model: name,
        };
      },
    });
    const [a, b] = await Promise.all(
      ['a', 'b'].map((name) =>
        h!.call(
          descriptors['trigger-sampling-request']!,
          { prompt: `prompt of ${name}` },
          {
            caller: callerNamed(name),
          },
        ),
      ),
    );
    expect(asked.sort()).toEqual([
      expect.stringMatching(/^a: .*prompt of a/),
      expect.stringMatching(/^b: .*prompt of b/),
    ]);
    expect(JSON.stringify(a)).toContain('answer of a');
    expect(JSON.stringify(a)).not.toContain('answer of b');
    expect(JSON.stringify(b)).toContain('answer of b');

    await stop(upstream);
    expect(await h.mcp.probe(TENANT, id)).toBe('active');
    await new Promise((r) => setTimeout(r, 10));
    expect(await h.mcp.probe(TENANT, id)).toBe('degraded');
    expect(await h.call(descriptors.echo!, { message: 'x' })).toMatchObject({
      status: 'failed',
      code: 'SERVER_DEGRADED',
    });

    upstream = await startHttp(port);
    await new Promise((r) => setTimeout(r, 10));
    expect(await h.mcp.probe(TENANT, id)).toBe('active');
    expect((await h.call(descriptors.echo!, { message: 'back' })).status).toBe('observed');
  });
});
