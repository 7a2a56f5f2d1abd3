import type { AuditRecordDraft } from '../../core/index.js';
import type {
  SecretMetadata,
  SecretPutOptions,
  SecretStore,
  StoredSecret,
} from '../../secrets/index.js';
import type { Tables } from '../schema/tables.js';
import {
  checkSecretVersion,
  deleteSecretQuery,
  latestSecretQuery,
  liveSecretsQuery,
  secretRow,
  toSecretMetadata,
  toStoredSecret,
  topSecretVersionQuery,
} from '../sql/secret-rows.js';
import { appendAuditRecords, appendLedger } from './sqlite-ledger.js';
import type { SqliteDatabase } from './sqlite-database.js';

/** {@link SecretStore} on SQLite: one row per version, deleted versions kept as tombstones. */
export class SqliteSecretStore implements SecretStore {
  constructor(private readonly db: SqliteDatabase) {}

  put(
    secret: StoredSecret,
    audit: AuditRecordDraft,
    options: SecretPutOptions = {},
  ): Promise<void> {
    return this.db.write(() => {
      // Read inside the write transaction: no other write can interleave before the insert.
      const top = this.top(secret.tenant, secret.name);
      const live =
        options.replaces === undefined ? undefined : this.latestRow(secret.tenant, secret.name);
      checkSecretVersion(secret, top, options.replaces, live?.version);
      this.db.run(this.db.kysely.insertInto('secrets').values(secretRow(secret)));
      appendLedger(this.db, { audit: [audit], events: [] });
    });
  }

  latest(tenant: string, name: string): Promise<StoredSecret | undefined> {
    const row = this.latestRow(tenant, name);
    return Promise.resolve(row && toStoredSecret(row));
  }

  topVersion(tenant: string, name: string): Promise<number> {
    return Promise.resolve(this.top(tenant, name));
  }

  list(tenant: string): Promise<SecretMetadata[]> {
    const rows = this.db.all(liveSecretsQuery(this.db.kysely, tenant));
    return Promise.resolve(rows.map(toSecretMetadata));
  }

  delete(tenant: string, name: string, at: string, audit: AuditRecordDraft): Promise<boolean> {
    return this.db.write(() => {
      const changed = this.db.run(deleteSecretQuery(this.db.kysely, tenant, name, at)).changes;
      if (changed === 0) return false;
      appendLedger(this.db, { audit: [audit], events: [] });
      return true;
    });
  }

  appendAudit(records: AuditRecordDraft[]): Promise<void> {
    return appendAuditRecords(this.db, records);
  }

  private top(tenant: string, name: string): number {
    const row = this.db.first(topSecretVersionQuery(this.db.kysely, tenant, name));
    return row?.top === null || row?.top === undefined ? 0 : Number(row.top);
  }

  private latestRow(tenant: string, name: string): Tables['secrets'] | undefined {
    return this.db.first(latestSecretQuery(this.db.kysely, tenant, name));
  }
}
