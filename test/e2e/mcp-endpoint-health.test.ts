import type { Client } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDemoGateway } from '../helpers/gateway-fixture.js';
import { connectMcp } from '../helpers/mcp-client.js';
import type { DemoGateway } from '../helpers/gateway-fixture.js';

let g: DemoGateway;
let serverId: string;
let client: Client;

const EVERYTHING = [
  'everything_echo__1_0_0',
  'everything_get-sum__1_0_0',
  'everything_toggle-simulated-logging__1_0_0',
];

beforeAll(async () => {
  g = await startDemoGateway({ listen: true });
  serverId = (await g.gateway.mcp.list('acme')).find((s) => s.name === 'everything')!.id;
  ({ client } = await connectMcp(`${g.url!}/mcp`, g.tokens.agent));
});
afterAll(async () => {
  await client?.close().catch(() => undefined);
  await g?.close();
});

async function listed(): Promise<string[]> {
  return (await client.listTools()).tools.map((t) => t.name);
}

/** Writes the server's records as the service would (the state itself is what is under test). */
const store = () => g.gateway.storage.mcp;
const noLedger = { audit: [], events: [] };

describe('tools/list offers only healthy MCP tools', () => {
  it('hides a tool whose binding was unbound by an upstream change, and shows it once re-bound', async () => {
    expect(await listed()).toEqual(expect.arrayContaining([...EVERYTHING, 'demo_echo__1_0_0']));
    const echo = (await store().binding('acme', serverId, 'echo'))!;
    const at = new Date().toISOString();
    await store().update(
      {
        tenant: 'acme',
        serverId,
        bindings: [
          {
            ...echo,
            state: 'unbound',
            change: {
              digest: 'f'.repeat(64),
              changes: [{ field: 'description', old: 'a', new: 'b' }],
              at,
            },
          },
        ],
      },
      noLedger,
    );
    const now = await listed();
    expect(now).not.toContain('everything_echo__1_0_0');
    expect(now).toContain('everything_get-sum__1_0_0');
    expect(now).toContain('demo_echo__1_0_0');

    await store().update({ tenant: 'acme', serverId, bindings: [echo] }, noLedger);
    expect(await listed()).toContain('everything_echo__1_0_0');
  });

  it('hides every tool of a degraded server, and shows them again when it is active', async () => {
    const active = (await store().get('acme', serverId))!;
    const degraded = { ...active, state: 'degraded' as const, version: active.version + 1 };
    expect(await store().update({ tenant: 'acme', serverId, server: degraded }, noLedger)).toBe(
      true,
    );
    const now = await listed();
    for (const name of EVERYTHING) expect(now).not.toContain(name);
    expect(now).toContain('demo_echo__1_0_0');
    expect((await client.listPrompts()).prompts).toEqual([]);

    const back = { ...degraded, state: 'active' as const, version: degraded.version + 1 };
    expect(await store().update({ tenant: 'acme', serverId, server: back }, noLedger)).toBe(true);
    expect(await listed()).toEqual(expect.arrayContaining(EVERYTHING));
    expect((await client.listPrompts()).prompts.length).toBeGreaterThan(0);
  });

  it('hides every tool, resource and prompt of a retired server', async () => {
    expect(
      await g.gateway.mcp.isCallable('acme', serverId, 'echo', {
        id: 'everything/echo',
        version: '1.0.0',
      }),
    ).toBe(true);
    await g.gateway.mcp.retire('acme', serverId, 'test', 'retired by the test');
    const now = await listed();
    for (const name of EVERYTHING) expect(now).not.toContain(name);
    expect(now).toContain('demo_echo__1_0_0');
    expect((await client.listResources()).resources).toEqual([]);
    expect((await client.listPrompts()).prompts).toEqual([]);
    expect(await g.gateway.mcp.connectionPid('acme', serverId)).toBeNull();
  });
});
