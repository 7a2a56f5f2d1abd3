import { describe } from 'vitest';
import { PostgresDatabase } from '../../src/storage/postgres/postgres-database.js';
import { PostgresAuditStore } from '../../src/storage/postgres/postgres-audit-store.js';
import { appendLedger } from '../../src/storage/postgres/postgres-ledger.js';
import { auditProofsContract } from '../contracts/audit-proofs.contract.js';
import { auditStoreContract } from '../contracts/audit-store.contract.js';
import type { MadeAuditStore } from '../contracts/audit-store.contract.js';
import { freshPostgresDatabase, missingPostgres } from '../helpers/postgres.js';
import { skipWithout } from '../helpers/prerequisites.js';

/** A fresh database in the run's cluster, and a close that ends its pool. */
async function freshDatabase(): Promise<{ db: PostgresDatabase; close: () => Promise<void> }> {
  const db = await PostgresDatabase.open({ url: await freshPostgresDatabase(), poolSize: 2 });
  return { db, close: () => db.close() };
}

describe.skipIf(skipWithout('PostgreSQL', missingPostgres()))('on PostgreSQL', () => {
  const postgresAuditStore = async (): Promise<MadeAuditStore> => {
    const { db, close } = await freshDatabase();
    return {
      store: new PostgresAuditStore(db),
      append: (entries) => db.write((tx) => appendLedger(tx, entries)),
      close,
    };
  };
  auditStoreContract('PostgresAuditStore', postgresAuditStore);
  auditProofsContract('PostgresAuditStore', postgresAuditStore);
});
