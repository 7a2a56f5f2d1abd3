import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { ErrorCode, GatehouseError } from '../core/index.js';
import { verifyAuditLog } from '../audit/index.js';
import type { JwkSet, LogVerification } from '../audit/index.js';
import type { AuditStore } from '../audit/index.js';
import {
  PostgresAuditStore,
  PostgresDatabase,
  SqliteAuditStore,
  SqliteDatabase,
} from '../storage/index.js';
import { isPostgresUrl } from './open-storage.js';

/**
 * Verifies every tenant's audit log in a data directory, offline, against the public keys kept
 * beside it (`DATA/keys/public-keys.json`): the log of the directory's SQLite file, or of the
 * PostgreSQL database `db` (`postgres://…`). Opens the database for reading beside a running
 * gateway and closes it before returning. Safe to repeat.
 * @throws GatehouseError NOT_FOUND when the directory holds no Gatehouse database or keys.
 */
export async function verifyDataDirectory(
  dataDir: string,
  db?: string,
): Promise<LogVerification[]> {
  const dir = resolve(dataDir);
  const postgres = isPostgresUrl(db) ? db : undefined;
  const file =
    db !== undefined && postgres === undefined
      ? resolve(db.replace(/^sqlite:/, ''))
      : join(dir, 'gatehouse.db');
  const keysFile = join(dir, 'keys', 'public-keys.json');
  const needed: (readonly [string, string])[] = [[keysFile, 'public key file']];
  if (postgres === undefined) needed.unshift([file, 'database']);
  for (const [path, what] of needed) {
    if (!existsSync(path))
      throw new GatehouseError(
        ErrorCode.NOT_FOUND,
        `no Gatehouse ${what} at ${path}; pass --data DIR`,
      );
  }
  const jwks: JwkSet = { keys: JSON.parse(await readFile(keysFile, 'utf8')) as JwkSet['keys'] };
  const opened = postgres
    ? await PostgresDatabase.open({ url: postgres, poolSize: 2 })
    : await SqliteDatabase.open({ file });
  try {
    const store: AuditStore =
      opened instanceof PostgresDatabase
        ? new PostgresAuditStore(opened)
        : new SqliteAuditStore(opened);
    const results: LogVerification[] = [];
    for (const tenant of await store.tenants())
      results.push(await verifyAuditLog(store, tenant, jwks));
    return results;
  } finally {
    await opened.close();
  }
}
