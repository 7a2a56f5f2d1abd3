import { execFileSync, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import {
  chmodSync,
  chownSync,
  closeSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  readFileSync,
  readdirSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { PostgresDatabase } from '../../src/storage/postgres/postgres-database.js';
import { freePort } from './ports.js';

/**
 * A throwaway PostgreSQL cluster for the tests: Debian's server binaries run as the `postgres`
 * user on a data directory of their own under the temporary directory and a spare port on
 * loopback. One cluster serves a whole test run (started by the first file that asks, under a lock
 * file, and stopped by the global teardown of test/helpers/postgres-global.ts); each test file
 * creates databases of its own in it.
 */

/** The environment variable naming the run's directory (set by the global setup). */
export const POSTGRES_ROOT_ENV = 'GATEHOUSE_TEST_PG_ROOT';

/** The `bin` directory of the newest installed PostgreSQL server, or undefined. */
export function postgresBin(): string | undefined {
  const base = '/usr/lib/postgresql';
  if (!existsSync(base)) return undefined;
  const versions = readdirSync(base)
    .filter((v) => existsSync(join(base, v, 'bin', 'initdb')))
    .sort((a, b) => Number(b) - Number(a));
  return versions[0] === undefined ? undefined : join(base, versions[0], 'bin');
}

/** Null when a cluster can be started here (the server and the `postgres` user); else why not. */
export function missingPostgres(): string | null {
  if (postgresBin() === undefined) return 'no /usr/lib/postgresql/*/bin/initdb';
  if (spawnSync('id', ['-u', 'postgres'], { stdio: 'ignore' }).status !== 0) {
    return 'there is no postgres user';
  }
  if (process.getuid?.() !== 0) return 'the tests must run as root to start it as postgres';
  return null;
}

/** A running cluster. */
export interface PostgresCluster {
  port: number;
  /** Its data directory (owned by `postgres`). */
  dir: string;
}

/** Runs a server binary as the postgres user; throws with its output when it fails. */
function asPostgres(bin: string, args: string[]): string {
  return execFileSync('runuser', ['-u', 'postgres', '--', join(postgresBin()!, bin), ...args], {
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'pipe'],
    cwd: '/',
  });
}

/** Initialises and starts a cluster in `dir` (created, owned by postgres). */
export async function startCluster(dir: string): Promise<PostgresCluster> {
  mkdirSync(dir, { recursive: true });
  const ids = execFileSync('id', ['-u', 'postgres'], { encoding: 'utf8' }).trim();
  const gid = execFileSync('id', ['-g', 'postgres'], { encoding: 'utf8' }).trim();
  chownSync(dir, Number(ids), Number(gid));
  asPostgres('initdb', ['-D', dir, '-A', 'trust', '-U', 'postgres', '--no-sync', '-E', 'UTF8']);
  const port = await freePort();
  startServer({ port, dir });
  return { port, dir };
}

/** Starts the server of an initialised cluster (again, after {@link stopServer}). */
export function startServer(c: PostgresCluster): void {
  const options = `-p ${c.port} -k ${c.dir} -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=200`;
  asPostgres('pg_ctl', [
    '-D',
    c.dir,
    '-o',
    options,
    '-l',
    join(c.dir, 'server.log'),
    '-w',
    'start',
  ]);
}

/** Stops the server (fast shutdown: open connections are cut); the data directory stays. */
export function stopServer(c: PostgresCluster): void {
  asPostgres('pg_ctl', ['-D', c.dir, '-m', 'fast', '-w', 'stop']);
}

/** Stops the server if it runs and deletes the data directory. */
export function destroyCluster(c: PostgresCluster): void {
  try {
    if (existsSync(join(c.dir, 'postmaster.pid'))) {
      asPostgres('pg_ctl', ['-D', c.dir, '-m', 'immediate', '-w', 'stop']);
    }
  } finally {
    rmSync(c.dir, { recursive: true, force: true });
  }
}

/** The connection URL of database `db` of the cluster, as the superuser. */
export function clusterUrl(c: { port: number }, db: string): string {
  return `postgres://postgres@127.0.0.1:${c.port}/${db}`;
}

/** A directory for a run's cluster, which the postgres user may enter. */
export function makeRoot(): string {
  const root = mkdtempSync(join(tmpdir(), 'gatehouse-pg-'));
  chmodSync(root, 0o755);
  return root;
}

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
  const client = new pg.Client({ connectionString: clusterUrl(cluster, 'postgres') });
  await client.connect();
  try {
    await client.query(sql);
  } finally {
    await client.end();
  }
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
