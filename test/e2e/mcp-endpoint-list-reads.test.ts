import type { Client } from '@modelcontextprotocol/client';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { mcpExecution } from '../../src/mcp/index.js';
import type { McpStore } from '../../src/mcp/index.js';
import { startDemoGateway } from '../helpers/gateway-fixture.js';
import { connectMcp } from '../helpers/mcp-client.js';
import type { DemoGateway } from '../helpers/gateway-fixture.js';

let g: DemoGateway;
let client: Client;

beforeAll(async () => {
  g = await startDemoGateway({ listen: true });
  ({ client } = await connectMcp(`${g.url!}/mcp`, g.tokens.agent));
});
afterAll(async () => {
  await client?.close().catch(() => undefined);
  await g?.close();
});
afterEach(() => {
  vi.restoreAllMocks();
});

/** The reading methods of the MCP store. */
const READS = ['get', 'list', 'listInStates', 'discovery', 'bindings', 'binding'] as const;

/**
 * How many times `op` read the MCP store (every store of the gateway's kind, through its
 * prototype). A
 * scheduled health probe (which starts with `listInStates`) that falls inside the window reads
 * too; such a window is measured again.
 */
async function readsOf(op: () => Promise<unknown>): Promise<number> {
  for (let attempt = 0; ; attempt++) {
    const store = Object.getPrototypeOf(g.gateway.storage.mcp) as McpStore;
    const spies = READS.map((m) => vi.spyOn(store, m));
    try {
      await op();
      const probed = spies[READS.indexOf('listInStates')]!.mock.calls.length > 0;
      if (!probed || attempt === 2) return spies.reduce((n, s) => n + s.mock.calls.length, 0);
    } finally {
      for (const s of spies) s.mockRestore();
    }
  }
}

/** The upstream servers of the MCP tools that tools/list offers, and how many such tools. */
async function mcpToolsListed(): Promise<{ servers: Set<string>; tools: number }> {
  const servers = new Set<string>();
  let tools = 0;
  for (const t of (await client.listTools()).tools) {
    const ref = t._meta?.['gatehouse/tool'] as { id: string; version: string };
    const d = g.gateway.registry.tool('acme', ref.id, ref.version)!.stored.descriptor;
    const exec = d.kind === 'mcp' ? mcpExecution(d) : null;
    if (!exec) continue;
    servers.add(exec.server);
    tools += 1;
  }
  return { servers, tools };
}

describe('the MCP endpoint reads the upstreams’ stored state once per request', () => {
  it('tools/list reads the tenant’s servers once and each server’s bindings and discovery once, whatever the number of tools', async () => {
    const { servers, tools } = await mcpToolsListed();
    // Several tools of one server: reading per tool (server, binding, discovery each) would
    // read 3 × tools times, more than the bound below.
    expect(tools).toBeGreaterThanOrEqual(3);
    expect(servers.size).toBe(1);
    const reads = await readsOf(() => client.listTools());
    expect(reads).toBeGreaterThan(0);
    expect(reads).toBeLessThanOrEqual(1 + 2 * servers.size);
  });

  it('prompts/list decides the servers the closure reaches with as few reads', async () => {
    const { servers } = await mcpToolsListed();
    expect((await client.listPrompts()).prompts.length).toBeGreaterThan(0);
    const reads = await readsOf(() => client.listPrompts());
    // The view (servers once, bindings and discovery per server), and one read of the server
    // each upstream request checks is still active just before it goes.
    expect(reads).toBeGreaterThan(0);
    expect(reads).toBeLessThanOrEqual(1 + 3 * servers.size);
  });
});
