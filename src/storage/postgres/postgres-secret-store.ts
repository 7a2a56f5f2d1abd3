import type { AuditRecordDraft } from '../../core/index.js';
import type {
  SecretMetadata,
  SecretPutOptions,
  SecretStore,
  StoredSecret,
} from '../../secrets/index.js';
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
import { appendAuditRecords, appendLedger } from './postgres-ledger.js';
import type { PostgresDatabase } from './postgres-database.js';
import type { Transaction } from './group-commit.js';

/** {@link SecretStore} on PostgreSQL: one row per version, deleted versions kept as tombstones. */
export class PostgresSecretStore implements SecretStore {
  constructor(private readonly db: PostgresDatabase) {}

  put(
    secret: StoredSecret,
    audit: AuditRecordDraft,
    options: SecretPutOptions = {},
  ): Promise<void> {
    return this.db.write(async (tx) => {
      // Writes take turns (the database's write lock): nothing changes it before the insert.
      const top = await topVersion(tx, secret.tenant, secret.name);
      const live =
        options.replaces === undefined
          ? undefined
          : await latestSecretQuery(tx, secret.tenant, secret.name).executeTakeFirst();
      checkSecretVersion(secret, top, options.replaces, live?.version);
      await tx.insertInto('secrets').values(secretRow(secret)).execute();
      await appendLedger(tx, { audit: [audit], events: [] });
    });
  }

  async latest(tenant: string, name: string): Promise<StoredSecret | undefined> {
    const row = await latestSecretQuery(this.db.kysely, tenant, name).executeTakeFirst();
    return row && toStoredSecret(row);
  }

  topVersion(tenant: string, name: string): Promise<number> {
    return topVersion(this.db.kysely, tenant, name);
  }

  async list(tenant: string): Promise<SecretMetadata[]> {
    return (await liveSecretsQuery(this.db.kysely, tenant).execute()).map(toSecretMetadata);
  }

  delete(tenant: string, name: string, at: string, audit: AuditRecordDraft): Promise<boolean> {
    return this.db.write(async (tx) => {
      const r = await deleteSecretQuery(tx, tenant, name, at).executeTakeFirst();
      if (Number(r.numUpdatedRows) === 0) return false;
      await appendLedger(tx, { audit: [audit], events: [] });
      return true;
    });
  }

  appendAudit(records: AuditRecordDraft[]): Promise<void> {
    return appendAuditRecords(this.db, records);
  }
}

async function topVersion(db: Transaction, tenant: string, name: string): Promise<number> {
  const row = await topSecretVersionQuery(db, tenant, name).executeTakeFirst();
  return row?.top === null || row?.top === undefined ? 0 : Number(row.top);
}
