import { join } from 'node:path';
import Database from 'better-sqlite3';
import { sql } from 'kysely';
import type { Gateway } from '../../src/app/index.js';
import type { AuditStore } from '../../src/audit/index.js';
import {
  PostgresAuditStore,
  PostgresDatabase,
  SqliteAuditStore,
  SqliteDatabase,
  postgresTypes,
} from '../../src/storage/index.js';
import { queryPostgres } from './postgres.js';
import { existingDatabaseFor } from './test-backend.js';

/**
 * Reading what a gateway stored, whichever backend the run uses (test/helpers/test-backend.ts).
 * Queries are plain SQL that both SQLite and PostgreSQL accept, with `?` for each parameter.
 */

/** Rows of `query` run on a gateway's own database (in process). */
export async function storedRows<T>(
  g: Gateway | { gateway: Gateway },
  query: string,
  ...params: unknown[]
): Promise<T[]> {
  const gateway = 'gateway' in g ? g.gateway : g;
  const parts = query.split('?');
  const strings = Object.assign([...parts], { raw: [...parts] }) as unknown as TemplateStringsArray;
  const result = await sql<T>(strings, ...params).execute(gateway.storage.kysely);
  return result.rows;
}

/**
 * Rows of `query` run on the database of data directory `dataDir`, from outside the gateway (which
 * may be running, stopped or killed): its SQLite file opened read-only, or the run's PostgreSQL
 * database made for it.
 */
export async function storedRowsOf<T>(
  dataDir: string,
  query: string,
  ...params: unknown[]
): Promise<T[]> {
  const url = existingDatabaseFor(dataDir);
  if (url === undefined) {
    const db = new Database(join(dataDir, 'gatehouse.db'), { readonly: true });
    try {
      return db.prepare(query).all(...params) as T[];
    } finally {
      db.close();
    }
  }
  let n = 0;
  const numbered = query.replace(/\?/g, () => `$${++n}`);
  // Values parsed as the gateway's own connections parse them (bigint as a number).
  return queryPostgres<T>(url, numbered, params, postgresTypes);
}

/**
 * Runs `fn` on the audit store of data directory `dataDir`'s database (the gateway stopped), and
 * closes it.
 */
export async function withAuditStoreOf<T>(
  dataDir: string,
  fn: (store: AuditStore) => Promise<T>,
): Promise<T> {
  const url = existingDatabaseFor(dataDir);
  if (url === undefined) {
    const db = await SqliteDatabase.open({ file: join(dataDir, 'gatehouse.db') });
    try {
      return await fn(new SqliteAuditStore(db));
    } finally {
      await db.close();
    }
  }
  const db = await PostgresDatabase.open({ url, poolSize: 1 });
  try {
    return await fn(new PostgresAuditStore(db));
  } finally {
    await db.close();
  }
}
