import { describe, expect, it } from 'vitest';
import type { LedgerEntries } from '../../src/core/index.js';
import type { AuditStore } from '../../src/audit/index.js';
import type { Discovery, McpBinding, McpServerRecord, McpStore } from '../../src/mcp/index.js';

/** What a {@link mcpStoreContract} test gets: the store, the audit log it writes to, a closer. */
export interface MadeMcpStore {
  store: McpStore;
  audit: AuditStore;
  close(): Promise<void>;
}

/**
 * The contract every {@link McpStore} keeps. Registers a vitest suite named `name`; `make` gives
 * a fresh, empty store for each test.
 */
export function mcpStoreContract(name: string, make: () => Promise<MadeMcpStore>): void {
  async function withStore(body: (made: MadeMcpStore) => Promise<void>): Promise<void> {
    const made = await make();
    try {
      await body(made);
    } finally {
      await made.close();
    }
  }

  const at = '2026-01-01T00:00:00.000Z';
  const ledger = (type: string, tenant = 'acme'): LedgerEntries => ({
    audit: [{ tenant, type, subject: 'mcp-server/s1', at, actor: 'm-1', data: {} }],
    events: [],
  });
  const server = (over: Partial<McpServerRecord> = {}): McpServerRecord => ({
    id: 's1',
    tenant: 'acme',
    name: 'everything «ü»',
    transport: { type: 'stdio', command: 'node', args: ['srv.js'] },
    identity: 'a'.repeat(64),
    state: 'registered',
    stateReason: null,
    version: 1,
    registeredBy: 'm-1',
    createdAt: at,
    updatedAt: at,
    ...over,
  });
  const discovery: Discovery = {
    serverId: 's1',
    tenant: 'acme',
    tools: [{ tool: { name: 'echo', inputSchema: { type: 'object' } }, digest: 'd'.repeat(64) }],
    resources: [{ uri: 'file:///a', name: 'a' }],
    prompts: [{ name: 'p' }],
    at,
  };
  const binding = (over: Partial<McpBinding> = {}): McpBinding => ({
    tenant: 'acme',
    serverId: 's1',
    tool: 'echo',
    digest: 'd'.repeat(64),
    approved: { name: 'echo', inputSchema: { type: 'object' } },
    descriptor: { id: 'e.echo', version: '1.0.0' },
    class: 'read',
    state: 'bound',
    change: null,
    boundBy: 'm-1',
    at,
    ...over,
  });

  describe(name, () => {
    it('creates a server once per identity among those not retired, with its audit record', () =>
      withStore(async ({ store, audit }) => {
        expect(await store.create(server(), ledger('mcp.server.registered'))).toBe(true);
        expect(await store.create(server({ id: 's2', name: 'renamed' }), ledger('x'))).toBe(false);
        expect(
          await store.create(server({ id: 's3', tenant: 'globex' }), ledger('x', 'globex')),
        ).toBe(true);
        expect(await store.get('acme', 's1')).toEqual(server());
        expect(await store.get('globex', 's1')).toBeUndefined();
        expect(await audit.size('acme')).toBe(1);
        // Once retired, the same identity may be registered again.
        expect(
          await store.update(
            { tenant: 'acme', serverId: 's1', server: server({ state: 'retired', version: 2 }) },
            ledger('mcp.server.retired'),
          ),
        ).toBe(true);
        expect(await store.create(server({ id: 's4' }), ledger('x'))).toBe(true);
        expect((await store.list('acme')).map((s) => s.id)).toEqual(['s1', 's4']);
      }));

    it('updates a server by compare-and-set, atomically with discovery and bindings', () =>
      withStore(async ({ store, audit }) => {
        await store.create(server(), ledger('r'));
        const verified = server({ state: 'verified', version: 2 });
        expect(
          await store.update(
            { tenant: 'acme', serverId: 's1', server: verified, discovery, bindings: [binding()] },
            ledger('v'),
          ),
        ).toBe(true);
        // A stale version writes nothing, not even the discovery or bindings given with it.
        expect(
          await store.update(
            {
              tenant: 'acme',
              serverId: 's1',
              server: server({ state: 'active', version: 2 }),
              discovery: { ...discovery, tools: [] },
              bindings: [binding({ state: 'unbound' })],
            },
            ledger('stale'),
          ),
        ).toBe(false);
        expect(await store.get('acme', 's1')).toEqual(verified);
        expect(await store.discovery('acme', 's1')).toEqual(discovery);
        expect(await store.binding('acme', 's1', 'echo')).toEqual(binding());
        expect(await audit.size('acme')).toBe(2);
        expect((await store.listInStates(['verified'])).map((s) => s.id)).toEqual(['s1']);
        expect(await store.listInStates(['active'])).toEqual([]);
      }));

    it('replaces bindings by server and tool; other servers keep theirs', () =>
      withStore(async ({ store }) => {
        await store.create(server(), ledger('r'));
        await store.create(server({ id: 's2', identity: 'b'.repeat(64) }), ledger('r'));
        await store.update({ tenant: 'acme', serverId: 's1', bindings: [binding()] }, ledger('b'));
        await store.update(
          { tenant: 'acme', serverId: 's2', bindings: [binding({ serverId: 's2' })] },
          ledger('b'),
        );
        const unbound = binding({
          state: 'unbound',
          change: {
            digest: 'e'.repeat(64),
            changes: [{ field: 'description', old: 'a', new: 'b' }],
            at,
          },
        });
        await store.update({ tenant: 'acme', serverId: 's1', bindings: [unbound] }, ledger('u'));
        expect(await store.bindings('acme', 's1')).toEqual([unbound]);
        expect((await store.binding('acme', 's2', 'echo'))!.state).toBe('bound');
        expect(await store.bindings('globex', 's1')).toEqual([]);
        expect(await store.discovery('acme', 's2')).toBeUndefined();
      }));
  });
}
