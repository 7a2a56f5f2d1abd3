import { randomBytes } from 'node:crypto';
import { copyFileSync, mkdirSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import {
  clusterUrl,
  destroyCluster,
  makeRoot,
  missingPostgres,
  queryPostgres,
  startCluster,
} from '../scripts/postgres-cluster.js';
import type { PostgresCluster } from '../scripts/postgres-cluster.js';
import { postLoad, spawnServer } from './load.js';
import { processCpuMs } from './measure.js';
import type { ChildServer, LoadResult } from './load.js';
import { loadRow } from './rows.js';

/** One REST load on PostgreSQL: what autocannon saw, and the database's own time per call. */
export interface PostgresLoad extends LoadResult {
  /**
   * Milliseconds the PostgreSQL server's backends were active, per answered call: executing
   * statements, and waiting in them for the write lock (a node's next batch waits there while the
   * previous one holds it, so this counts waiting even with one node).
   */
  dbMsPerCall: number;
  /** CPU milliseconds per answered call of each process taking part (they share the cores). */
  cpuMsPerCall: CpuPerCall;
}

/** CPU milliseconds per call: each node, the PostgreSQL server's processes, the load generator. */
export interface CpuPerCall {
  nodes: number[];
  postgres: number;
  loadGenerator: number;
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
  cluster: PostgresCluster,
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
  let cpu: { nodes: number[]; postgres: number; loadGenerator: number };
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
    const nodesBefore = nodes.map((n) => processCpuMs(n.pid));
    const postgresBefore = postgresCpuMs(cluster.dir);
    const selfBefore = process.cpuUsage();
    measured = merge(await load(shape.seconds));
    const self = process.cpuUsage(selfBefore);
    cpu = {
      nodes: nodes.map((n, i) => processCpuMs(n.pid) - nodesBefore[i]!),
      postgres: cpuSince(postgresBefore, postgresCpuMs(cluster.dir)),
      loadGenerator: (self.user + self.system) / 1000,
    };
  } finally {
    for (const n of nodes) await n.close();
  }
  // Closed, the nodes' backends end and report everything as they go.
  await new Promise((resolve) => setTimeout(resolve, 500));
  const dbMs = (await activeMs(db)) - before;
  const calls = measured.perSecond * shape.seconds;
  const perCall = (ms: number) => (calls > 0 ? ms / calls : 0);
  return {
    ...measured,
    dbMsPerCall: perCall(dbMs),
    cpuMsPerCall: {
      nodes: cpu.nodes.map(perCall),
      postgres: perCall(cpu.postgres),
      loadGenerator: perCall(cpu.loadGenerator),
    },
  };
}

/**
 * The CPU milliseconds so far of each process of the cluster in `dir`: the postmaster and its
 * children (the backends, the WAL writer, the checkpointer…).
 */
function postgresCpuMs(dir: string): Map<number, number> {
  const postmaster = Number(readFileSync(join(dir, 'postmaster.pid'), 'utf8').split('\n')[0]);
  const out = new Map<number, number>();
  for (const name of readdirSync('/proc')) {
    const pid = Number(name);
    if (!Number.isInteger(pid)) continue;
    try {
      const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
      if (pid === postmaster || Number(fields[1]) === postmaster)
        out.set(pid, (Number(fields[11]) + Number(fields[12])) * 10);
    } catch {
      // Gone meanwhile.
    }
  }
  return out;
}

/** What the processes of `after` spent since `before` (a process born meanwhile, all of its). */
function cpuSince(before: ReadonlyMap<number, number>, after: ReadonlyMap<number, number>): number {
  let sum = 0;
  for (const [pid, ms] of after) sum += ms - (before.get(pid) ?? 0);
  return sum;
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

/** CPU per call of each process, as `node 0.61 + 0.60, postgres 0.35, load 0.20`. */
function cpuNote(c: CpuPerCall): string {
  return (
    `node ${c.nodes.map((n) => n.toFixed(2)).join(' + ')}, postgres ${c.postgres.toFixed(2)}, ` +
    `load ${c.loadGenerator.toFixed(2)}`
  );
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
      `; database ${r.dbMsPerCall.toFixed(2)} ms/call; CPU ms/call: ${cpuNote(r.cpuMsPerCall)}`,
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
