import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { SqliteAuditStore } from '../../src/storage/sqlite/sqlite-audit-store.js';
import { SqliteDatabase } from '../../src/storage/sqlite/sqlite-database.js';
import { SqliteSecretStore } from '../../src/storage/sqlite/sqlite-secret-store.js';
import { secretStoreContract } from '../contracts/secret-store.contract.js';

async function freshDatabase(): Promise<{ db: SqliteDatabase; close: () => Promise<void> }> {
  const dir = mkdtempSync(join(tmpdir(), 'gatehouse-secrets-'));
  const db = await SqliteDatabase.open({ file: join(dir, 'g.db') });
  return {
    db,
    close: async () => {
      await db.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

secretStoreContract('SqliteSecretStore', async () => {
  const { db, close } = await freshDatabase();
  return { store: new SqliteSecretStore(db), audit: new SqliteAuditStore(db), close };
});

describe('SqliteSecretStore', () => {
  it('lets exactly one of two concurrent puts of the same version win', async () => {
    const { db, close } = await freshDatabase();
    try {
      const store = new SqliteSecretStore(db);
      const row = (scopes: string[]) => ({
        tenant: 'acme',
        name: 'token',
        version: 1,
        scopes,
        createdAt: '2026-01-01T00:00:00.000Z',
        sealed: { ciphertext: 'AA==', iv: 'AA==', tag: 'AA==', keyId: 'k' },
      });
      const audit = {
        tenant: 'acme',
        type: 'secret.put',
        subject: 'secret/token',
        at: '2026-01-01T00:00:00.000Z',
        actor: 'admin-1',
        data: {},
      };
      const results = await Promise.allSettled([
        store.put(row(['a']), audit),
        store.put(row(['b']), audit),
      ]);
      expect(results.map((r) => r.status)).toEqual(['fulfilled', 'rejected']);
      expect((await store.latest('acme', 'token'))?.scopes).toEqual(['a']);
      expect(await new SqliteAuditStore(db).size('acme')).toBe(1);
    } finally {
      await close();
    }
  });
});
