import { execFileSync, spawnSync } from 'node:child_process';
import {
  chmodSync,
  chownSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  rmSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { freePort } from './free-port.js';

/**
 * A throwaway PostgreSQL cluster: Debian's server binaries run as the `postgres` user on a data
 * directory of its own and a spare port on loopback. The tests share one per run
 * (test/helpers/postgres.ts); the bench starts one of its own (bench/postgres.ts). Both import it
 * from here, so neither depends on the other's folder.
 */

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

/** A directory for a cluster, which the postgres user may enter. */
export function makeRoot(): string {
  const root = mkdtempSync(join(tmpdir(), 'gatehouse-pg-'));
  chmodSync(root, 0o755);
  return root;
}

/**
 * The rows of `sql` (with `params` for `$1`, `$2`, …) run on the database at `url`, on a
 * connection of its own, closed after. `types` parses the values (default: as `pg` does).
 */
export async function queryPostgres<T>(
  url: string,
  sql: string,
  params: unknown[] = [],
  types?: pg.ClientConfig['types'],
): Promise<T[]> {
  const client = new pg.Client({ connectionString: url, ...(types ? { types } : {}) });
  await client.connect();
  try {
    return (await client.query(sql, params)).rows as T[];
  } finally {
    await client.end();
  }
}
