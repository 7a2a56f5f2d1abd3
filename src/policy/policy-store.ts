import type { AuditRecordDraft } from '../core/index.js';

/** One stored policy text: a tenant's (`project` null) or one project's. */
export interface StoredPolicy {
  tenant: string;
  /** Null for the tenant-wide policy. */
  project: string | null;
  /** Cedar policy text, validated against the Gatehouse schema before it was stored. */
  text: string;
  /** 1 for the first text of a scope, then one more for each replacement. */
  version: number;
  /** ISO 8601 time of the replacement. */
  updatedAt: string;
}

/** Where tenant and project policies live. Implemented in storage/. */
export interface PolicyStore {
  /** The current policy of a scope (`project` null: the tenant's), or undefined when none. */
  get(tenant: string, project: string | null): Promise<StoredPolicy | undefined>;
  /**
   * Stores `p` as its scope's current policy and appends `audit` to the audit log, in one
   * transaction. Optimistic: `p.version` must be one more than the stored version (1 when there is
   * none). Not safe to repeat: a repeat is a conflict.
   * @throws GatehouseError CONFLICT, writing nothing, when the version is not the next one.
   */
  put(p: StoredPolicy, audit: AuditRecordDraft): Promise<void>;
  /** The current policy of every scope, of every tenant. */
  list(): Promise<StoredPolicy[]>;
}
