import type { Lease, LeaseStore } from '../../src/capacity/index.js';

/** Leases in memory: the unit under test is the queue's order, not storage. */
export class MemoryLeaseStore implements LeaseStore {
  readonly rows = new Map<string, Lease>();
  insert(lease: Lease): Promise<void> {
    this.rows.set(lease.id, lease);
    return Promise.resolve();
  }
  update(lease: Lease): Promise<void> {
    this.rows.set(lease.id, lease);
    return Promise.resolve();
  }
  active(): Promise<Lease[]> {
    return Promise.resolve([...this.rows.values()].filter((l) => l.status === 'active'));
  }
  activeFor(tenant: string, holder: string): Promise<Lease | undefined> {
    return Promise.resolve(
      [...this.rows.values()].find(
        (l) => l.status === 'active' && l.tenant === tenant && l.holder === holder,
      ),
    );
  }
}
