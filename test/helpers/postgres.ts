import { randomBytes } from 'node:crypto';
import { closeSync, existsSync, openSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll } from 'vitest';
import { PostgresDatabase } from '../../src/storage/postgres/postgres-database.js';
import {
  clusterUrl,
  destroyCluster,
  makeRoot,
  queryPostgres,
  startCluster,
} from '../../scripts/postgres-cluster.js';
import type { PostgresCluster } from '../../scripts/postgres-cluster.js';

/**
 * The tests' PostgreSQL: one throwaway cluster (scripts/postgres-cluster.ts) serves a whole test
 * run (started by the first file that asks, under a lock file, and stopped by the global teardown
 * of test/helpers/postgres-global.ts); each test file creates databases of its own in it.
 */

// The cluster itself, for the test files that start one of their own (the outage tests).
export * from '../../scripts/postgres-cluster.js';

/** The environment variable naming the run's directory (set by the global setup). */
export const POSTGRES_ROOT_ENV = 'GATEHOUSE_TEST_PG_ROOT';

/** Holds an exclusive lock file while `fn` runs (processes of one test run take turns). */
async function withLockFile<T>(file: string, fn: () => Promise<T>): Promise<T> {
  for (;;) {
    try {
      closeSync(openSync(file, 'wx'));
      break;
    } catch {
      await new Promise((r) => setTimeout(r, 50));
    }
  }
  try {
    return await fn();
  } finally {
    rmSync(file, { force: true });
  }
}

/**
 * The test run's shared cluster, started by the first caller. Without the global setup (a file
 * run on its own through another config) the cluster lives in a directory of its own, stopped at
 * the exit of this process.
 */
export async function sharedCluster(): Promise<PostgresCluster> {
  let root = process.env[POSTGRES_ROOT_ENV];
  let owned = false;
  if (root === undefined) {
    root = makeRoot();
    process.env[POSTGRES_ROOT_ENV] = root;
    owned = true;
  }
  const ready = join(root, 'cluster.json');
  const cluster = await withLockFile(join(root, 'lock'), async () => {
    if (existsSync(ready)) return JSON.parse(readFileSync(ready, 'utf8')) as PostgresCluster;
    const c = await startCluster(join(root, 'data'));
    writeFileSync(ready, JSON.stringify(c));
    return c;
  });
  if (owned) process.once('exit', () => destroyCluster(cluster));
  return cluster;
}

/** Runs `sql` on the cluster's `postgres` database. */
async function admin(cluster: PostgresCluster, sql: string): Promise<void> {
  await queryPostgres(clusterUrl(cluster, 'postgres'), sql);
}

/** A unique database name. */
const databaseName = (prefix: string) => `${prefix}_${randomBytes(6).toString('hex')}`;

/**
 * A new, empty database in the shared cluster; returns its URL. Its name is unique, so test files
 * (and tests) running at once never share one.
 */
export async function freshPostgresDatabase(prefix = 'gh'): Promise<string> {
  const cluster = await sharedCluster();
  const name = databaseName(prefix);
  await admin(cluster, `CREATE DATABASE ${name}`);
  return clusterUrl(cluster, name);
}

/**
 * A new database with Gatehouse's migrations applied, copied from a template migrated once per
 * run (a copy takes a fraction of the time migrating takes); returns its URL.
 */
export async function migratedPostgresDatabase(prefix = 'gh'): Promise<string> {
  const cluster = await sharedCluster();
  const root = process.env[POSTGRES_ROOT_ENV]!;
  const template = 'gatehouse_template';
  await withLockFile(join(root, 'template.lock'), async () => {
    const done = join(root, 'template.done');
    if (existsSync(done)) return;
    await admin(cluster, `CREATE DATABASE ${template}`);
    const db = await PostgresDatabase.open({ url: clusterUrl(cluster, template), poolSize: 1 });
    await db.close();
    writeFileSync(done, '');
  });
  const name = databaseName(prefix);
  await admin(cluster, `CREATE DATABASE ${name} TEMPLATE ${template}`);
  return clusterUrl(cluster, name);
}

/**
 * A cluster of the calling test file's own, started before its tests and destroyed after them,
 * for tests that stop and start it (which the run's shared cluster, other files' databases, must
 * never be). Call at the top of a `describe`; the returned function gives the running cluster.
 */
export function useOwnCluster(): () => PostgresCluster {
  const root = makeRoot();
  let cluster: PostgresCluster | undefined;
  beforeAll(async () => {
    cluster = await startCluster(join(root, 'data'));
  });
  afterAll(() => {
    try {
      if (cluster) destroyCluster(cluster);
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });
  return () => {
    if (!cluster) throw new Error('the cluster is not started (call useOwnCluster in a describe)');
    return cluster;
  };
}
