import { describe } from 'vitest';
import { PostgresDatabase } from '../../src/storage/postgres/postgres-database.js';
import { PostgresAuditStore } from '../../src/storage/postgres/postgres-audit-store.js';
import { PostgresInvocationStore } from '../../src/storage/postgres/postgres-invocation-store.js';
import { appendLedger } from '../../src/storage/postgres/postgres-ledger.js';
import { PostgresLeaseStore } from '../../src/storage/postgres/postgres-lease-store.js';
import { PostgresNodeStore } from '../../src/storage/postgres/postgres-node-store.js';
import { PostgresMcpStore } from '../../src/storage/postgres/postgres-mcp-store.js';
import { PostgresMcpStreamEventStore } from '../../src/storage/postgres/postgres-mcp-stream-event-store.js';
import { PostgresPolicyStore } from '../../src/storage/postgres/postgres-policy-store.js';
import { PostgresSecretStore } from '../../src/storage/postgres/postgres-secret-store.js';
import { PostgresTenancyStore } from '../../src/storage/postgres/postgres-tenancy-store.js';
import { PostgresToolStore } from '../../src/storage/postgres/postgres-tool-store.js';
import { auditProofsContract } from '../contracts/audit-proofs.contract.js';
import { auditStoreContract } from '../contracts/audit-store.contract.js';
import type { MadeAuditStore } from '../contracts/audit-store.contract.js';
import { invocationStoreContract } from '../contracts/invocation-store.contract.js';
import { leaseStoreContract } from '../contracts/lease-store.contract.js';
import { nodeStoreContract } from '../contracts/node-store.contract.js';
import { mcpStoreContract } from '../contracts/mcp-store.contract.js';
import { mcpStreamEventStoreContract } from '../contracts/mcp-stream-event-store.contract.js';
import { policyStoreContract } from '../contracts/policy-store.contract.js';
import { secretStoreContract } from '../contracts/secret-store.contract.js';
import { tenancyStoreContract } from '../contracts/tenancy-store.contract.js';
import { toolStoreContract } from '../contracts/tool-store.contract.js';
import { migratedPostgresDatabase, missingPostgres } from '../helpers/postgres.js';
import { skipWithout } from '../helpers/prerequisites.js';

// Every store contract, on a real PostgreSQL: a database of its own per test, in the run's one
// cluster (test/helpers/postgres.ts). test/storage/sqlite-stores.test.ts runs them on SQLite.

/** A fresh, migrated database in the run's cluster, and a close that ends its pool. */
async function freshDatabase(): Promise<{
  db: PostgresDatabase;
  url: string;
  close: () => Promise<void>;
}> {
  const url = await migratedPostgresDatabase();
  const db = await PostgresDatabase.open({ url, poolSize: 2 });
  return { db, url, close: () => db.close() };
}

describe.skipIf(skipWithout('PostgreSQL', missingPostgres()))('on PostgreSQL', () => {
  toolStoreContract('PostgresToolStore', async () => {
    const { db, close } = await freshDatabase();
    return { store: new PostgresToolStore(db), audit: new PostgresAuditStore(db), close };
  });

  tenancyStoreContract('PostgresTenancyStore', async () => {
    const { db, close } = await freshDatabase();
    return { store: new PostgresTenancyStore(db), audit: new PostgresAuditStore(db), close };
  });

  invocationStoreContract('PostgresInvocationStore', async () => {
    const { db, close } = await freshDatabase();
    return { store: new PostgresInvocationStore(db), close };
  });

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

  policyStoreContract('PostgresPolicyStore', async () => {
    const { db, close } = await freshDatabase();
    return { store: new PostgresPolicyStore(db), close };
  });

  secretStoreContract('PostgresSecretStore', async () => {
    const { db, close } = await freshDatabase();
    return { store: new PostgresSecretStore(db), audit: new PostgresAuditStore(db), close };
  });

  leaseStoreContract('PostgresLeaseStore', async () => {
    const { db, close } = await freshDatabase();
    return { store: new PostgresLeaseStore(db), close };
  });

  nodeStoreContract('PostgresNodeStore', async () => {
    const { db, url, close } = await freshDatabase();
    // Each other store is another node: a pool of its own on the same database.
    const others: PostgresDatabase[] = [];
    return {
      store: new PostgresNodeStore(db),
      another: async () => {
        const other = await PostgresDatabase.open({ url, poolSize: 2 });
        others.push(other);
        return new PostgresNodeStore(other);
      },
      close: async () => {
        await Promise.all(others.map((o) => o.close()));
        await close();
      },
    };
  });

  mcpStoreContract('PostgresMcpStore', async () => {
    const { db, close } = await freshDatabase();
    return { store: new PostgresMcpStore(db), audit: new PostgresAuditStore(db), close };
  });

  mcpStreamEventStoreContract('PostgresMcpStreamEventStore', async (limits, now) => {
    const { db, close } = await freshDatabase();
    return { store: new PostgresMcpStreamEventStore(db, limits, now), close };
  });
});
