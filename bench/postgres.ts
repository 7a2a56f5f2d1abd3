import { randomBytes } from 'node:crypto';
import { copyFileSync, mkdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import {
  clusterUrl,
  destroyCluster,
  makeRoot,
  missingPostgres,
  queryPostgres,
  startCluster,
} from '../scripts/postgres-cluster.js';
import { postLoad, spawnServer } from './load.js';
import type { ChildServer, LoadResult } from './load.js';
import { loadRow } from './rows.js';

/** One REST load on PostgreSQL: what autocannon saw, and the database's own time per call. */
export interface PostgresLoad extends LoadResult {
  /** Milliseconds the PostgreSQL server spent executing statements, per answered call. */
  dbMsPerCall: number;
}

/** Governed echo over REST on PostgreSQL: one node, and two nodes with the load split between them. */
export interface PostgresBench {
  oneNode: PostgresLoad;
  twoNodes: PostgresLoad;
}

/** What the load is: the request, its connections and seconds (shared with the SQLite row). */
export interface PostgresLoadShape {
  cli: string;
  body: unknown;
  connections: number;
  seconds: number;
  warmupSeconds: number;
}

/**
 * Starts a throwaway PostgreSQL cluster (Debian's server, as the tests do) and measures the
 * governed echo over REST on one `gatehouse serve` node of it, then on two nodes of one database,
 * each taking half the connections (a round-robin client). Each node is a child process, as is the
 * cluster; the load generator is this process. Skipped, saying why, without PostgreSQL.
 */
export async function postgresBench(
  root: string,
  children: ChildServer[],
  shape: PostgresLoadShape,
): Promise<PostgresBench | { skipped: string }> {
  const missing = missingPostgres();
  if (missing !== null) return { skipped: missing };
  // A directory the postgres user may enter (the bench's own is private to root).
  const clusterRoot = makeRoot();
  try {
    const cluster = await startCluster(join(clusterRoot, 'data'));
    try {
      const oneNode = await measure(root, 'one', 1, cluster, children, shape);
      const twoNodes = await measure(root, 'two', 2, cluster, children, shape);
      return { oneNode, twoNodes };
    } finally {
      destroyCluster(cluster);
    }
  } finally {
    rmSync(clusterRoot, { recursive: true, force: true });
  }
}

async function measure(
  root: string,
  name: string,
  count: number,
  cluster: { port: number },
  children: ChildServer[],
  shape: PostgresLoadShape,
): Promise<PostgresLoad> {
  await queryPostgres(clusterUrl(cluster, 'postgres'), `CREATE DATABASE bench_${name}`);
  const db = clusterUrl(cluster, `bench_${name}`);
  const env = {
    GATEHOUSE_DB: db,
    GATEHOUSE_MASTER_KEY: randomBytes(32).toString('base64'),
    GATEHOUSE_SANDBOX: 'off',
    GATEHOUSE_LOG_REQUESTS: '0',
  };
  const dirs = Array.from({ length: count }, (_, i) => join(root, `${name}-${i}`));
  const serve = (dir: string) =>
    spawnServer([shape.cli, 'serve', '--demo', '--data', dir, '--port', '0'], env);
  // The first node seeds the demo; the others start with its tokens (no principals of their own).
  const nodes = [await serve(dirs[0]!)];
  children.push(nodes[0]!);
  const tokensFile = join(dirs[0]!, 'demo-tokens.json');
  for (const dir of dirs.slice(1)) {
    mkdirSync(dir, { recursive: true });
    copyFileSync(tokensFile, join(dir, 'demo-tokens.json'));
    const node = await serve(dir);
    children.push(node);
    nodes.push(node);
  }
  let measured: LoadResult;
  let before: number;
  try {
    const { agent } = JSON.parse(readFileSync(tokensFile, 'utf8')) as { agent: string };
    const load = (seconds: number) =>
      Promise.all(
        nodes.map((n) =>
          postLoad({
            url: n.url,
            path: '/v1/invocations',
            body: shape.body,
            headers: { authorization: `Bearer ${agent}` },
            connections: Math.round(shape.connections / nodes.length),
            seconds,
          }),
        ),
      );
    await load(shape.warmupSeconds);
    // A busy backend reports its statistics about once a second: wait for the warm-up's.
    await new Promise((resolve) => setTimeout(resolve, 1_100));
    before = await activeMs(db);
    measured = merge(await load(shape.seconds));
  } finally {
    for (const n of nodes) await n.close();
  }
  // Closed, the nodes' backends end and report everything as they go.
  await new Promise((resolve) => setTimeout(resolve, 500));
  const dbMs = (await activeMs(db)) - before;
  const calls = measured.perSecond * shape.seconds;
  return { ...measured, dbMsPerCall: calls > 0 ? dbMs / calls : 0 };
}

/**
 * The loads of several nodes as one: calls per second added up, the p50 weighted by each node's
 * calls, the worst p99, errors added up.
 */
function merge(results: LoadResult[]): LoadResult {
  const total = results.reduce((n, r) => n + r.perSecond, 0);
  const firstError = results.find((r) => r.firstError !== undefined)?.firstError;
  return {
    perSecond: total,
    p50: total === 0 ? 0 : Math.round(results.reduce((n, r) => n + r.p50 * r.perSecond, 0) / total),
    p99: Math.max(...results.map((r) => r.p99)),
    non2xx: results.reduce((n, r) => n + r.non2xx, 0),
    errors: results.reduce((n, r) => n + r.errors, 0),
    ...(firstError !== undefined ? { firstError } : {}),
  };
}

/** PostgreSQL's own count of milliseconds spent executing statements in the database so far. */
async function activeMs(url: string): Promise<number> {
  const rows = await queryPostgres<{ ms: number | null }>(
    url,
    'SELECT active_time AS ms FROM pg_stat_database WHERE datname = current_database()',
  );
  return Number(rows[0]?.ms ?? 0);
}

const perCallMs = (perSecond: number): number => (perSecond > 0 ? 1000 / perSecond : Infinity);

/** The table's rows of {@link postgresBench} (one saying why when it was skipped). */
export function postgresRows(
  b: PostgresBench | { skipped: string },
  shape: Pick<PostgresLoadShape, 'connections' | 'seconds'>,
): string[][] {
  if ('skipped' in b)
    return [['governed demo/echo, REST, PostgreSQL: skipped', '-', '-', '-', b.skipped]];
  const row = (name: string, r: PostgresLoad, connections: string): string[] =>
    loadRow(
      name,
      r,
      { connections, seconds: shape.seconds },
      `; database ${r.dbMsPerCall.toFixed(2)} ms/call`,
    );
  return [
    row('governed demo/echo, REST, PostgreSQL, 1 node', b.oneNode, String(shape.connections)),
    row(
      'governed demo/echo, REST, PostgreSQL, 2 nodes',
      b.twoNodes,
      `${shape.connections} (half per node)`,
    ),
  ];
}

/**
 * The summary line: what PostgreSQL adds per call over SQLite at one node (by throughput: the
 * whole system's time per call under the same load; target ≤ 0.5 ms), and whether two nodes are
 * not slower than one.
 */
export function postgresSummary(
  b: PostgresBench | { skipped: string },
  sqlite: LoadResult,
): string {
  if ('skipped' in b) return '';
  const added = perCallMs(b.oneNode.perSecond) - perCallMs(sqlite.perSecond);
  const ratio = b.twoNodes.perSecond / b.oneNode.perSecond;
  return (
    `PostgreSQL: 1 node ${Math.round(b.oneNode.perSecond)} calls/s vs SQLite ${Math.round(sqlite.perSecond)} calls/s: ` +
    `${added >= 0 ? '+' : ''}${added.toFixed(2)} ms per call (target ≤ +0.5 ms, ${added <= 0.5 ? 'met' : 'missed'}); ` +
    `2 nodes ${Math.round(b.twoNodes.perSecond)} calls/s = ${ratio.toFixed(2)}× 1 node (target: not slower, ${ratio >= 1 ? 'met' : 'missed'}); ` +
    `database time ${b.oneNode.dbMsPerCall.toFixed(2)} ms/call (1 node), ${b.twoNodes.dbMsPerCall.toFixed(2)} ms/call (2 nodes).\n`
  );
}
