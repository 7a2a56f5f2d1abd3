import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { isGatehouseError } from '../../src/core/index.js';
import { SqliteDatabase } from '../../src/storage/sqlite/sqlite-database.js';
import { SqliteAuditStore } from '../../src/storage/sqlite/sqlite-audit-store.js';
import { SqliteInvocationStore } from '../../src/storage/sqlite/sqlite-invocation-store.js';
import { appendLedger } from '../../src/storage/sqlite/sqlite-ledger.js';
import { SqliteLeaseStore } from '../../src/storage/sqlite/sqlite-lease-store.js';
import { SqliteNodeStore } from '../../src/storage/sqlite/sqlite-node-store.js';
import { SqlitePolicyStore } from '../../src/storage/sqlite/sqlite-policy-store.js';
import { SqliteTenancyStore } from '../../src/storage/sqlite/sqlite-tenancy-store.js';
import { SqliteToolStore } from '../../src/storage/sqlite/sqlite-tool-store.js';
import { auditProofsContract } from '../contracts/audit-proofs.contract.js';
import { auditStoreContract } from '../contracts/audit-store.contract.js';
import type { MadeAuditStore } from '../contracts/audit-store.contract.js';
import { invocationStoreContract } from '../contracts/invocation-store.contract.js';
import { leaseStoreContract } from '../contracts/lease-store.contract.js';
import { nodeStoreContract } from '../contracts/node-store.contract.js';
import { policyStoreContract } from '../contracts/policy-store.contract.js';
import { tenancyStoreContract } from '../contracts/tenancy-store.contract.js';
import { toolStoreContract } from '../contracts/tool-store.contract.js';

/** A fresh database in a temporary file, and a close that deletes it. */
async function freshDatabase(): Promise<{ db: SqliteDatabase; close: () => Promise<void> }> {
  const dir = mkdtempSync(join(tmpdir(), 'gatehouse-sqlite-'));
  const db = await SqliteDatabase.open({ file: join(dir, 'g.db') });
  return {
    db,
    close: async () => {
      await db.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

toolStoreContract('SqliteToolStore', async () => {
  const { db, close } = await freshDatabase();
  return { store: new SqliteToolStore(db), audit: new SqliteAuditStore(db), close };
});

tenancyStoreContract('SqliteTenancyStore', async () => {
  const { db, close } = await freshDatabase();
  return { store: new SqliteTenancyStore(db), audit: new SqliteAuditStore(db), close };
});

invocationStoreContract('SqliteInvocationStore', async () => {
  const { db, close } = await freshDatabase();
  return { store: new SqliteInvocationStore(db), close };
});

const sqliteAuditStore = async (): Promise<MadeAuditStore> => {
  const { db, close } = await freshDatabase();
  return {
    store: new SqliteAuditStore(db),
    append: (entries) => db.write(() => appendLedger(db, entries)),
    close,
  };
};
auditStoreContract('SqliteAuditStore', sqliteAuditStore);
auditProofsContract('SqliteAuditStore', sqliteAuditStore);

leaseStoreContract('SqliteLeaseStore', async () => {
  const { db, close } = await freshDatabase();
  return { store: new SqliteLeaseStore(db), close };
});

nodeStoreContract('SqliteNodeStore', async () => {
  const { db, close } = await freshDatabase();
  // One process holds a SQLite file: the other claimers share its database.
  return {
    store: new SqliteNodeStore(db),
    another: () => Promise.resolve(new SqliteNodeStore(db)),
    close,
  };
});

policyStoreContract('SqlitePolicyStore', async () => {
  const { db, close } = await freshDatabase();
  return { store: new SqlitePolicyStore(db), close };
});

describe('SqlitePolicyStore', () => {
  const draft = (version: number) => ({
    tenant: 'acme',
    type: 'policy.replaced',
    subject: 'policy/acme',
    at: '2026-01-01T00:00:00.000Z',
    actor: 'admin-1',
    data: { version },
  });
  const policy = (version: number, project: string | null = null) => ({
    tenant: 'acme',
    project,
    text: `// v${version}`,
    version,
    updatedAt: '2026-01-01T00:00:00.000Z',
  });

  it('appends the audit record of a put, and none of a refused one', async () => {
    const { db, close } = await freshDatabase();
    try {
      const store = new SqlitePolicyStore(db);
      const audit = new SqliteAuditStore(db);
      await store.put(policy(1), draft(1));
      await expect(store.put(policy(1), draft(1))).rejects.toThrow(/version 1 cannot follow/);
      expect(await audit.size('acme')).toBe(1);
      const [row] = await audit.records('acme', 0, 1);
      expect(JSON.parse(row!.record)).toMatchObject({ type: 'policy.replaced', index: 0 });
    } finally {
      await close();
    }
  });

  it('lets exactly one of two concurrent puts of the same version win', async () => {
    const { db, close } = await freshDatabase();
    try {
      const store = new SqlitePolicyStore(db);
      const a = { ...policy(1), text: '// a' };
      const b = { ...policy(1), text: '// b' };
      const results = await Promise.allSettled([store.put(a, draft(1)), store.put(b, draft(1))]);
      expect(results.map((r) => r.status)).toEqual(['fulfilled', 'rejected']);
      const rejected = results[1] as PromiseRejectedResult;
      expect(isGatehouseError(rejected.reason, 'CONFLICT')).toBe(true);
      expect((await store.get('acme', null))?.text).toBe('// a');
      expect(await new SqliteAuditStore(db).size('acme')).toBe(1);
    } finally {
      await close();
    }
  });

  it('stores a project policy apart from the tenant policy', async () => {
    const { db, close } = await freshDatabase();
    try {
      const store = new SqlitePolicyStore(db);
      await store.put(policy(1, 'web'), draft(1));
      expect(await store.get('acme', null)).toBeUndefined();
      expect(await store.list()).toEqual([policy(1, 'web')]);
    } finally {
      await close();
    }
  });
});
