import type { AuditRecordDraft } from '../core/index.js';
import type { Checkpoint } from './checkpoint.js';

/** One stored audit record: the JCS text that is its Merkle leaf, and the leaf hash kept beside it. */
export interface StoredAuditRecord {
  tenant: string;
  index: number;
  /** The exact JCS text of the record. */
  record: string;
  /** Base64 leaf hash as written. */
  leafHash: string;
}

/**
 * Read access to the audit log, storage of signed checkpoints, and appending records that belong
 * to no other store's change (records of a change are appended in that change's transaction).
 */
export interface AuditStore {
  /** Appends records, in order, in one transaction (nothing is appended when it fails). */
  append(records: AuditRecordDraft[]): Promise<void>;
  /** The number of records in a tenant's log. */
  size(tenant: string): Promise<number>;
  /** Records `from` ≤ index < `to` of a tenant's log, in order. */
  records(tenant: string, from: number, to: number): Promise<StoredAuditRecord[]>;
  /** Every tenant with at least one record. */
  tenants(): Promise<string[]>;
  /** Stores a signed checkpoint. Safe to repeat for the same tree size. */
  saveCheckpoint(cp: Checkpoint): Promise<void>;
  /** Every stored checkpoint of a tenant, by tree size. */
  checkpoints(tenant: string): Promise<Checkpoint[]>;
}
