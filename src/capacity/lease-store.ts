import type { LedgerEntries } from '../core/index.js';
import type { Lease } from './lease.js';

/** Persistence of leases: they are durable, so the reaper finds them after a crash. */
export interface LeaseStore {
  /** Stores a new lease with its audit records. */
  insert(lease: Lease, ledger: LedgerEntries): Promise<void>;
  /** Replaces a lease (a status change) with its audit records. */
  update(lease: Lease, ledger: LedgerEntries): Promise<void>;
  /**
   * Every active lease, oldest first; with `nodes`, only those of these nodes (`null` in it: also
   * those stored without a node).
   */
  active(nodes?: readonly (string | null)[]): Promise<Lease[]>;
  /** The active lease of a holder, if any. */
  activeFor(tenant: string, holder: string): Promise<Lease | undefined>;
}
