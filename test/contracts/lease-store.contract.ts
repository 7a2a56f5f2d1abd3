import { describe, expect, it } from 'vitest';
import type { Lease, LeaseStore } from '../../src/capacity/index.js';

/**
 * The contract every {@link LeaseStore} keeps (the part of it nodes rely on). Registers a vitest
 * suite named `name`; `make` gives a fresh, empty store for each test.
 */
export function leaseStoreContract(
  name: string,
  make: () => Promise<{ store: LeaseStore; close(): Promise<void> }>,
): void {
  async function withStore(body: (store: LeaseStore) => Promise<void>): Promise<void> {
    const made = await make();
    try {
      await body(made.store);
    } finally {
      await made.close();
    }
  }

  const lease = (n: number, over: Partial<Lease> = {}): Lease => ({
    id: `0190000${String(n).padStart(5, '0')}`,
    tenant: 'acme',
    pool: 'default',
    holder: `invocation/i-${n}`,
    agent: 'p-1',
    status: 'active',
    resources: { cpus: 1, memoryBytes: 1024, gpus: 0, pids: 64 },
    timeoutMs: 1000,
    readOnlyMounts: [],
    egressAllow: [],
    credentials: [],
    worktree: null,
    createdAt: '2026-01-01T00:00:00.000Z',
    expiresAt: '2026-01-01T01:00:00.000Z',
    releasedAt: null,
    endReason: null,
    ...over,
  });

  const none = { audit: [], events: [] };

  describe(`LeaseStore contract: ${name}`, () => {
    it('lists the active leases of the nodes asked for, null standing for leases without one', () =>
      withStore(async (store) => {
        await store.insert(lease(1, { node: 'node-a' }), none);
        await store.insert(lease(2, { node: 'node-b' }), none);
        await store.insert(lease(3), none);
        await store.insert(lease(4, { node: 'node-a' }), none);
        await store.update(
          lease(4, { node: 'node-a', status: 'released', releasedAt: '2026-01-01T00:01:00.000Z' }),
          none,
        );
        const ids = (ls: Lease[]) => ls.map((l) => Number(l.id.slice(-5)));
        expect(ids(await store.active())).toEqual([1, 2, 3]);
        expect(ids(await store.active(['node-a']))).toEqual([1]);
        expect(ids(await store.active(['node-a', null]))).toEqual([1, 3]);
        expect(ids(await store.active([]))).toEqual([]);
        expect((await store.active(['node-b']))[0]).toEqual(lease(2, { node: 'node-b' }));
      }));
  });
}
