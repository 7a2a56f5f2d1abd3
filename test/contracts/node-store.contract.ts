import { describe, expect, it } from 'vitest';
import type { GatewayNode, NodeStore } from '../../src/capacity/index.js';

/** What a node store contract test is given: a store, and a way to make another on its database. */
export interface MadeNodeStore {
  store: NodeStore;
  /**
   * Another store on the same database, as a second gateway node holds it (its own connections
   * where the backend has them).
   */
  another(): Promise<NodeStore>;
  close(): Promise<void>;
}

/**
 * The contract every {@link NodeStore} keeps. Registers a vitest suite named `name`; `make` gives
 * a fresh, empty registry for each test.
 */
export function nodeStoreContract(name: string, make: () => Promise<MadeNodeStore>): void {
  async function withStore(body: (made: MadeNodeStore) => Promise<void>): Promise<void> {
    const made = await make();
    try {
      await body(made);
    } finally {
      await made.close();
    }
  }

  const at = (s: number) => new Date(Date.UTC(2026, 0, 1, 0, 0, s)).toISOString();

  const node = (id: string, s: number, over: Partial<GatewayNode> = {}): GatewayNode => ({
    id,
    host: 'host-1',
    pid: 100,
    status: 'alive',
    startedAt: at(s),
    heartbeatAt: at(s),
    endedAt: null,
    claimedBy: null,
    ...over,
  });

  describe(`NodeStore contract: ${name}`, () => {
    it('registers nodes and gives them back, and a restart replaces its entry', () =>
      withStore(async ({ store }) => {
        await store.register(node('node-b', 1));
        await store.register(node('node-a', 2, { host: 'host-2', pid: 7 }));
        expect(await store.get('node-a')).toEqual(node('node-a', 2, { host: 'host-2', pid: 7 }));
        expect((await store.list()).map((n) => n.id)).toEqual(['node-a', 'node-b']);
        expect(await store.get('node-c')).toBeUndefined();
        await store.stop('node-b', at(5));
        await store.register(node('node-b', 9, { pid: 101 }));
        expect(await store.get('node-b')).toEqual(node('node-b', 9, { pid: 101 }));
      }));

    it('moves the heartbeat of a live node only', () =>
      withStore(async ({ store }) => {
        await store.register(node('node-a', 1));
        expect(await store.heartbeat('node-a', at(6))).toBe(true);
        expect((await store.get('node-a'))?.heartbeatAt).toBe(at(6));
        await store.stop('node-a', at(8));
        expect(await store.get('node-a')).toMatchObject({ status: 'stopped', endedAt: at(8) });
        expect(await store.heartbeat('node-a', at(9))).toBe(false);
        expect((await store.get('node-a'))?.heartbeatAt).toBe(at(6));
        expect(await store.heartbeat('node-x', at(9))).toBe(false);
      }));

    it('claims the live nodes whose heartbeat is older than the cut-off, never itself or a stopped one', () =>
      withStore(async ({ store }) => {
        await store.register(node('node-self', 1));
        await store.register(node('node-stale', 1));
        await store.register(node('node-fresh', 1));
        await store.register(node('node-gone', 1));
        await store.heartbeat('node-fresh', at(20));
        await store.stop('node-gone', at(2));
        // Its own heartbeat is stale too: a node never claims itself.
        const claimed = await store.claimStale('node-self', at(10), at(30));
        expect(claimed).toEqual([
          node('node-stale', 1, { status: 'claimed', endedAt: at(30), claimedBy: 'node-self' }),
        ]);
        expect(await store.get('node-self')).toMatchObject({ status: 'alive' });
        expect(await store.get('node-fresh')).toMatchObject({ status: 'alive' });
        expect(await store.get('node-gone')).toMatchObject({ status: 'stopped' });
        // Claimed once: a later claim finds nothing more of it, and its heartbeat is refused.
        const later = await store.claimStale('node-fresh', at(10), at(31));
        expect(later.map((n) => n.id)).toEqual(['node-self']);
        expect(await store.heartbeat('node-stale', at(32))).toBe(false);
        // It starts again (same id): alive, and claimable again once silent.
        await store.register(node('node-stale', 40));
        expect(await store.get('node-stale')).toMatchObject({ status: 'alive', claimedBy: null });
      }));

    it('gives each stale node to exactly one of several nodes claiming at once', () =>
      withStore(async (made) => {
        const store = made.store;
        const others = [store, await made.another(), await made.another()];
        for (const id of ['dead-1', 'dead-2', 'dead-3']) await store.register(node(id, 1));
        for (let i = 0; i < others.length; i++) await store.register(node(`live-${i}`, 50));
        const results = await Promise.all(
          others.map((s, i) => s.claimStale(`live-${i}`, at(10), at(60))),
        );
        const claimed = results.flat().map((n) => n.id);
        expect(claimed.sort()).toEqual(['dead-1', 'dead-2', 'dead-3']);
        for (const [i, r] of results.entries())
          for (const n of r) expect((await store.get(n.id))?.claimedBy).toBe(`live-${i}`);
      }));
  });
}
