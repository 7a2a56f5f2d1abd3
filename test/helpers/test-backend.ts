import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { POSTGRES_ROOT_ENV, migratedPostgresDatabase, missingPostgres } from './postgres.js';

/**
 * The one switch that runs the end-to-end suite on PostgreSQL: with `GATEHOUSE_TEST_DB=postgres`
 * (`npm run test:postgres`), every gateway the tests start — in process (`startDemoGateway`) or as
 * a `gatehouse serve` child (`spawnServer`) — keeps its stores in a fresh database of the run's
 * PostgreSQL cluster instead of `DATA/gatehouse.db`, and the CLI's offline commands (`runCli`
 * with `--data DIR`) are pointed at that same database. Unset, or `sqlite`, everything runs on the
 * embedded default. A test about the SQLite file itself pins `backend: 'sqlite'`.
 */
export const TEST_DB_ENV = 'GATEHOUSE_TEST_DB';

/** The backends a test run can use. */
export type TestBackend = 'sqlite' | 'postgres';

/**
 * The backend this run's gateways use.
 * @throws Error when the switch names an unknown backend, or PostgreSQL is switched on but missing.
 */
export function testBackend(env: NodeJS.ProcessEnv = process.env): TestBackend {
  const value = env[TEST_DB_ENV];
  if (value === undefined || value === '' || value === 'sqlite') return 'sqlite';
  if (value !== 'postgres') {
    throw new Error(`${TEST_DB_ENV}=${value}: expected "sqlite" or "postgres"`);
  }
  const missing = missingPostgres();
  if (missing !== null) throw new Error(`${TEST_DB_ENV}=postgres, but ${missing}`);
  return 'postgres';
}

/**
 * The PostgreSQL database that stands in for data directory `dataDir`'s SQLite file on this run, or
 * undefined on SQLite. The first call for a directory creates a migrated database; later calls —
 * a restart of the same gateway, from this process or another of the run — get the same one.
 */
export async function databaseFor(dataDir: string): Promise<string | undefined> {
  if (testBackend() === 'sqlite') return undefined;
  const file = mappingFile(dataDir);
  if (existsSync(file)) return readFileSync(file, 'utf8');
  const url = await migratedPostgresDatabase('e2e');
  writeFileSync(file, url);
  return url;
}

/** The PostgreSQL database already made for `dataDir` on this run, if any (no new one). */
export function existingDatabaseFor(dataDir: string): string | undefined {
  if (testBackend() === 'sqlite') return undefined;
  const file = mappingFile(dataDir);
  return existsSync(file) ? readFileSync(file, 'utf8') : undefined;
}

/** Where the run keeps the database of `dataDir`: beside the run's cluster, not in the directory. */
function mappingFile(dataDir: string): string {
  const root = process.env[POSTGRES_ROOT_ENV];
  if (root === undefined) {
    throw new Error(`${TEST_DB_ENV}=postgres needs vitest's global setup (${POSTGRES_ROOT_ENV})`);
  }
  const dir = join(root, 'databases');
  mkdirSync(dir, { recursive: true });
  const key = createHash('sha256').update(resolve(dataDir)).digest('hex').slice(0, 32);
  return join(dir, key);
}
