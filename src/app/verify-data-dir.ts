import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { ErrorCode, GatehouseError } from '../core/index.js';
import { jwkOf, readPublishedKeys, verifyAuditLog } from '../audit/index.js';
import type { JwkSet, LogVerification } from '../audit/index.js';
import type { AuditStore } from '../audit/index.js';
import {
  PostgresAuditStore,
  PostgresDatabase,
  PostgresSigningKeyStore,
  SqliteAuditStore,
  SqliteDatabase,
} from '../storage/index.js';
import { isPostgresUrl } from './open-storage.js';

/**
 * Verifies every tenant's audit log, offline: of a data directory's SQLite file against the public
 * keys kept beside it (`DATA/keys/public-keys.json`), or of the PostgreSQL database `db`
 * (`postgres://…`) against the keys the nodes share in it (no data directory needed). Opens the
 * database for reading beside running gateways and closes it before returning. Safe to repeat.
 * @throws GatehouseError NOT_FOUND when the directory holds no Gatehouse database or keys, or the
 *   PostgreSQL database holds no signing keys (no gateway ever started on it).
 */
export async function verifyDataDirectory(
  dataDir: string,
  db?: string,
): Promise<LogVerification[]> {
  const postgres = isPostgresUrl(db) ? db : undefined;
  if (postgres !== undefined) return verifyPostgres(postgres);
  const dir = resolve(dataDir);
  const file = db !== undefined ? resolve(db.replace(/^sqlite:/, '')) : join(dir, 'gatehouse.db');
  const keysDir = join(dir, 'keys');
  if (!existsSync(file)) throw notFound('database', file);
  const published = await readPublishedKeys(keysDir);
  if (published === undefined) throw notFound('public key file', join(keysDir, 'public-keys.json'));
  const jwks: JwkSet = { keys: published };
  const opened = await SqliteDatabase.open({ file });
  try {
    return await verifyAll(new SqliteAuditStore(opened), jwks);
  } finally {
    await opened.close();
  }
}

function notFound(what: string, path: string): GatehouseError {
  return new GatehouseError(
    ErrorCode.NOT_FOUND,
    `no Gatehouse ${what} at ${path}; pass --data DIR`,
  );
}

async function verifyPostgres(url: string): Promise<LogVerification[]> {
  const opened = await PostgresDatabase.open({ url, poolSize: 2 });
  try {
    const keys = await new PostgresSigningKeyStore(opened).list();
    if (keys.length === 0) {
      throw new GatehouseError(
        ErrorCode.NOT_FOUND,
        'the database holds no signing keys: no gateway has started on it yet',
      );
    }
    const jwks: JwkSet = { keys: keys.map((k) => jwkOf(k.kid, k.x)) };
    return await verifyAll(new PostgresAuditStore(opened), jwks);
  } finally {
    await opened.close();
  }
}

async function verifyAll(store: AuditStore, jwks: JwkSet): Promise<LogVerification[]> {
  const results: LogVerification[] = [];
  for (const tenant of await store.tenants())
    results.push(await verifyAuditLog(store, tenant, jwks));
  return results;
}
