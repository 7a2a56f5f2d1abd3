import type { AuditRecordDraft } from '../core/index.js';
import type { Checkpoint } from './checkpoint.js';
import type { SubtreeRef } from './merkle-subtree.js';

/** One stored audit record: the JCS text that is its Merkle leaf, and the leaf hash kept beside it. */
export interface StoredAuditRecord {
  tenant: string;
  index: number;
  /** The exact JCS text of the record. */
  record: string;
  /** Base64 leaf hash as written. */
  leafHash: string;
}

/** Tree sizes `from` ≤ size < `to`. */
export interface SizeRange {
  from: number;
  to: number;
}

/**
 * Read access to the audit log, storage of signed checkpoints, and appending records that belong
 * to no other store's change (records of a change are appended in that change's transaction).
 *
 * Every append — here or in another store's transaction — also stores the hash of each perfect
 * subtree of level ≥ 1 the new leaf completes (`completedSubtrees`, from the stored hashes of its
 * `appendSiblings`), in the same transaction as the record: a log never holds a record without
 * its subtrees. Proofs and roots of any tree size are then read from O(log n) of them.
 */
export interface AuditStore {
  /** Appends records, in order, in one transaction (nothing is appended when it fails). */
  append(records: AuditRecordDraft[]): Promise<void>;
  /** The number of records in a tenant's log. */
  size(tenant: string): Promise<number>;
  /** Records `from` ≤ index < `to` of a tenant's log, in order. */
  records(tenant: string, from: number, to: number): Promise<StoredAuditRecord[]>;
  /**
   * The stored hashes of complete perfect subtrees of a tenant's log, in the order of `refs`
   * (repeats allowed): level 0 is a record's leaf hash as written with it, higher levels the
   * hashes stored as appends completed them. `null` for a subtree not stored (not yet complete,
   * or a damaged store). One read per subtree at most; never a pass over the log.
   */
  subtreeHashes(tenant: string, refs: readonly SubtreeRef[]): Promise<(Buffer | null)[]>;
  /** Every tenant with at least one record. */
  tenants(): Promise<string[]>;
  /** Stores a signed checkpoint. Safe to repeat for the same tree size. */
  saveCheckpoint(cp: Checkpoint): Promise<void>;
  /** The stored checkpoints of a tenant, by tree size: all, or those whose size is in `sizes`. */
  checkpoints(tenant: string, sizes?: SizeRange): Promise<Checkpoint[]>;
}
