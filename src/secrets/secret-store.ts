import type { AuditRecordDraft } from '../core/index.js';
import type { SealedSecret } from './secret-cipher.js';

/** What may be shown about a secret: never its value, never its ciphertext. */
export interface SecretMetadata {
  name: string;
  /** 1 for the first version of a name, then one more per put or rotation (deleted ones count). */
  version: number;
  /** The scopes a credential may ask this secret for. */
  scopes: string[];
  /** ISO 8601 time this version was stored. */
  createdAt: string;
}

/** One stored version of a secret: its metadata and its sealed value. */
export interface StoredSecret extends SecretMetadata {
  tenant: string;
  sealed: SealedSecret;
}

/** Options of {@link SecretStore.put}. */
export interface SecretPutOptions {
  /**
   * When set, the newest live version must be exactly this one (a rotation of it); otherwise the
   * put is refused with CONFLICT. Keeps a rotation from reviving a secret deleted meanwhile.
   */
  replaces?: number;
}

/**
 * Where sealed secret versions live. Implemented in storage/. Every write appends its audit record
 * in the same transaction; no method takes or returns a plaintext value.
 */
export interface SecretStore {
  /**
   * Stores a new version and appends `audit`, in one transaction. Optimistic: `secret.version`
   * must be one more than the highest stored version of the name, deleted ones included (1 when
   * there is none). Not safe to repeat: a repeat is a conflict.
   * @throws GatehouseError CONFLICT, writing nothing, when the version is not the next one or
   *   `options.replaces` is not the newest live version.
   */
  put(secret: StoredSecret, audit: AuditRecordDraft, options?: SecretPutOptions): Promise<void>;
  /** The newest version of a name that is not deleted, or undefined. */
  latest(tenant: string, name: string): Promise<StoredSecret | undefined>;
  /** The highest version ever stored for a name, deleted ones included; 0 when none. */
  topVersion(tenant: string, name: string): Promise<number>;
  /** The newest live version of each of a tenant's secrets, by name; metadata only. */
  list(tenant: string): Promise<SecretMetadata[]>;
  /**
   * Marks every live version of a name deleted at `at` and appends `audit`, in one transaction.
   * @returns false, writing nothing, when no live version exists (so a repeat changes nothing).
   */
  delete(tenant: string, name: string, at: string, audit: AuditRecordDraft): Promise<boolean>;
  /** Appends audit records (credential leases issued and revoked) in one transaction. */
  appendAudit(records: AuditRecordDraft[]): Promise<void>;
}
