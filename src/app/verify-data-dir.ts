import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { ErrorCode, GatehouseError } from '../core/index.js';
import { verifyAuditLog } from '../audit/index.js';
import type { JwkSet, LogVerification } from '../audit/index.js';
import { SqliteAuditStore, SqliteDatabase } from '../storage/index.js';

/**
 * Verifies every tenant's audit log in a data directory, offline, against the public keys kept
 * beside it (`DATA/keys/public-keys.json`). Opens the database for reading beside a running
 * gateway (SQLite allows it) and closes it before returning. Safe to repeat.
 * @throws GatehouseError NOT_FOUND when the directory holds no Gatehouse database or keys.
 */
export async function verifyDataDirectory(dataDir: string): Promise<LogVerification[]> {
  const dir = resolve(dataDir);
  const file = join(dir, 'gatehouse.db');
  const keysFile = join(dir, 'keys', 'public-keys.json');
  for (const [path, what] of [
    [file, 'database'],
    [keysFile, 'public key file'],
  ] as const) {
    if (!existsSync(path))
      throw new GatehouseError(
        ErrorCode.NOT_FOUND,
        `no Gatehouse ${what} at ${path}; pass --data DIR`,
      );
  }
  const jwks: JwkSet = { keys: JSON.parse(await readFile(keysFile, 'utf8')) as JwkSet['keys'] };
  const db = await SqliteDatabase.open({ file });
  try {
    const store = new SqliteAuditStore(db);
    const results: LogVerification[] = [];
    for (const tenant of await store.tenants())
      results.push(await verifyAuditLog(store, tenant, jwks));
    return results;
  } finally {
    await db.close();
  }
}
