import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ProtocolError } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { InvocationRecord } from '../../src/invocation/index.js';
import { startDemoGateway } from '../helpers/gateway-fixture.js';
import type { DemoGateway, ErrorBody } from '../helpers/gateway-fixture.js';
import { connectMcp } from '../helpers/mcp-client.js';
import { publishAgent } from '../helpers/sandbox-tools.js';
import { buildFixture } from '../fixtures/build-fixture.js';
import type { FixtureConfig, FixtureTool } from './mcp-harness.js';
import { ACTOR, TENANT } from './mcp-harness.js';

/**
 * An upstream MCP server's answers are JSON the gateway did not write: what cannot be kept as
 * canonical JSON (a number that overflows, nesting past the bound) must end the call cleanly,
 * never as a 500, and a tool list that cannot be digested must fail verification, saying where.
 */
let g: DemoGateway;
/** Fixture configs, readable by the sandbox user (stdio servers may run in a sandbox). */
const configs = mkdtempSync(join(tmpdir(), 'gatehouse-mcp-json-'));
chmodSync(configs, 0o755);

beforeAll(async () => {
  g = await startDemoGateway({ listen: true });
});
afterAll(async () => {
  await g?.close();
  rmSync(configs, { recursive: true, force: true });
});

function transport(name: string, tools: FixtureTool[], resources?: FixtureConfig['resources']) {
  const file = join(configs, `${name}.json`);
  writeFileSync(file, JSON.stringify({ tools, ...(resources ? { resources } : {}) }), {
    mode: 0o644,
  });
  return {
    type: 'stdio' as const,
    command: process.execPath,
    args: [buildFixture('changing-upstream'), file],
  };
}

const deep = (n: number) => `${'['.repeat(n)}${']'.repeat(n)}`;

describe('JSON from upstream MCP servers', () => {
  it('ends a call whose answer cannot be kept: failed for read, uncertain for write, no 500', async () => {
    const raw = (name: string, text: string): FixtureTool => ({
      name,
      inputSchema: { type: 'object' },
      behaviour: 'raw',
      raw: text,
    });
    const server = await g.gateway.mcp.register(TENANT, ACTOR, {
      name: 'raw-answers',
      transport: transport(
        'raw-answers',
        [
          raw('infinite', '{"n":[1,1e400]}'),
          raw('deep', deep(10_000)),
          raw('deep-write', deep(10_000)),
          raw('fine', '{"n":[1,2]}'),
        ],
        [
          { uri: 'raw://infinite', name: 'infinite', raw: '[1e400]' },
          { uri: 'raw://fine', name: 'fine', raw: '[1]' },
        ],
      ),
    });
    await g.gateway.mcp.verify(TENANT, server.id, ACTOR);
    const descriptors: Record<string, unknown>[] = [];
    for (const [tool, cls] of [
      ['infinite', 'read'],
      ['deep', 'read'],
      ['deep-write', 'workspace-write'],
      ['fine', 'read'],
    ] as const) {
      const { descriptor } = await g.gateway.mcp.bind(TENANT, server.id, ACTOR, {
        tool,
        class: cls,
        descriptor: { id: `raw/${tool}`, version: '1.0.0' },
      });
      descriptors.push(descriptor as unknown as Record<string, unknown>);
    }
    await g.gateway.mcp.activate(TENANT, server.id, ACTOR);
    const agent = await publishAgent(g, 'raw-answers-agent', descriptors);
    const call = (tool: string) =>
      g.invoke(agent, `raw-${tool}`, {
        tool: { id: `raw/${tool}`, version: '1.0.0' },
        input: {},
        environment: 'dev',
      });

    const infinite = await call('infinite');
    expect(infinite.status).toBe(200);
    expect(infinite.body).toMatchObject({
      status: 'failed',
      error: { code: 'UPSTREAM_INVALID_ANSWER' },
    });
    expect(infinite.body.error?.message).toMatch(/\/structuredContent\/value\/n\/1.*not finite/);
    const tooDeep = await call('deep');
    expect(tooDeep.body).toMatchObject({
      status: 'failed',
      error: { code: 'UPSTREAM_INVALID_ANSWER' },
    });
    expect(tooDeep.body.error?.message).toMatch(/nest deeper than 64/);
    // A write call got an answer it cannot read: whether the tool acted is unknown.
    const write = await call('deep-write');
    expect(write.status).toBe(200);
    expect(write.body).toMatchObject({
      status: 'uncertain',
      error: { code: 'UPSTREAM_INVALID_ANSWER' },
    });
    const fine = await call('fine');
    expect(fine.body.status).toBe('observed');

    // A resource read passed through /mcp: refused as the upstream's failure, recorded, no 500.
    const { client } = await connectMcp(`${g.url!}/mcp`, agent);
    try {
      expect((await client.readResource({ uri: 'raw://fine' })).contents[0]).toMatchObject({
        _meta: { value: [1] },
      });
      const refused = await client.readResource({ uri: 'raw://infinite' }).then(
        () => undefined,
        (err: unknown) => err as ProtocolError,
      );
      expect(refused).toBeInstanceOf(ProtocolError);
      expect(refused?.code).toBe(-32000);
      expect(refused?.message).toMatch(
        /\/contents\/0\/_meta\/value\/0: the number Infinity is not finite/,
      );
    } finally {
      await client.close();
    }
    // Each record is complete and readable.
    for (const r of [infinite, tooDeep, write]) {
      const stored = await g.inject<InvocationRecord>('GET', `/v1/invocations/${r.body.id}`, {
        token: g.tokens.operator,
      });
      expect(stored.status).toBe(200);
      expect(stored.body.status).toBe(r.body.status);
      const receipt = await g.inject('GET', `/v1/invocations/${r.body.id}/receipt`, {
        token: g.tokens.operator,
      });
      expect(receipt.status).toBe(200);
    }
  }, 60_000);

  it('fails verification of a tool list it cannot digest as the upstream unavailable, saying where', async () => {
    for (const [name, schema, where] of [
      // The SDK's own validation refuses Infinity before the digest is tried.
      ['schema-infinite', '{"type":"number","maximum":1e400}', /Infinity/],
      // The SDK's own (recursive) validation of tool schemas overflows first; the error is kept.
      ['schema-deep', deep(10_000), /nest deeper than 64|call stack size/],
    ] as const) {
      const server = await g.gateway.mcp.register(TENANT, ACTOR, {
        name,
        transport: transport(name, [{ name: 't', inputSchema: {}, rawSchema: schema }]),
      });
      const res = await g.inject<ErrorBody>('POST', `/v1/mcp-servers/${server.id}/verify`, {
        token: g.tokens.admin,
      });
      // The upstream answered with what cannot be used: as for one that cannot be reached.
      expect(res.status, JSON.stringify(res.body)).toBe(503);
      expect(res.body.error.code).toBe('UNAVAILABLE');
      expect(res.body.error.message).toMatch(where);
    }
  }, 60_000);
});
