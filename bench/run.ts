/**
 * Gatehouse benchmark: the governed demo/echo call in-process and over REST, and the floors it is
 * built on (a bare Fastify route with a durable SQLite insert, an Ed25519 signature, a Cedar
 * decision), all measured in one run on a temporary data directory. Prints one table and a summary.
 *
 *   npm run bench
 *   npm run bench -- --audit-scale     (the audit log at a million records instead: audit-scale.ts)
 *   BENCH_ONLY=inprocess npm run bench (only the in-process echo rows, their floors, target 1)
 *   BENCH_ONLY=browser npm run bench   (only the browser and computer-use rows: browser.ts)
 *   BENCH_ONLY=postgres npm run bench  (REST on SQLite and on PostgreSQL, 1 and 2 nodes: postgres.ts)
 *   BENCH_ONLY=studio npm run bench    (only the Studio's first-view rows: studio.ts)
 *   BENCH_ONLY=memory npm run bench    (only 100 MB through shell, MCP and HTTP: memory.ts)
 *   BENCH_ONLY=sandbox npm run bench   (only the sandboxed demo/sh rows and target 4: sandbox.ts)
 */
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { openDemoGateway } from './demo-gateway.js';
import type { DemoTokens } from '../src/app/index.js';
import { auditScaleBench, auditScaleOptions } from './audit-scale.js';
import { browserBench } from './browser.js';
import { cedarFloor, signFloor, sqliteInsertFloor } from './floors.js';
import { postLoad, spawnServer } from './load.js';
import type { ChildServer, LoadResult } from './load.js';
import type { Timing } from './measure.js';
import {
  collectGarbage,
  formatTable,
  processCpuMs,
  timeConcurrent,
  timeSequential,
} from './measure.js';
import { inProcessTargetLine, targetLines } from './targets.js';
import { httpBench } from './http.js';
import { mcpBench } from './mcp.js';
import { memoryBench, memoryRows, memoryTargetLine } from './memory.js';
import {
  browserRows,
  loadMs,
  loadRow,
  ms,
  studioRows,
  studioSummary,
  timingRow,
  us,
  whole,
} from './rows.js';
import { postgresBench, postgresRows, postgresSummary } from './postgres.js';
import { sandboxBench, sandboxRows, sandboxTargetLine } from './sandbox.js';
import { STREAM_CONNECTIONS, STREAM_SECONDS, streamsBench } from './streams.js';
import { studioBench } from './studio.js';

const WARMUP_CALLS = 500;
const MEASURED_CALLS = 3000;
const IN_FLIGHT = 16;
const CONNECTIONS = 50;
const LOAD_SECONDS = 8;
const LOAD_WARMUP_SECONDS = 1;
const FLOOR_OPS = 5000;
const INSERT_OPS = 1000;

const MCP_CALLS = 1000;
/** Calls in flight in the sandbox bench's concurrent rows. */
const SANDBOX_IN_FLIGHT = 8;
const MCP_WARMUP = 30;
const HTTP_CALLS = 1000;
const HTTP_WARMUP = 100;
const TARGET_HTTP_RATIO = 1.3;
const STUDIO_VIEWS = 5;
const BROWSER_COLD_CALLS = 5;
const BROWSER_WARM_CALLS = 20;
const TARGET_BROWSER_WARM_RATIO = 1.5;
const TARGET_STUDIO_MS = 1000;

const echoBody = {
  tool: { id: 'demo/echo', version: '1.0.0' },
  input: { message: 'hello' },
  environment: 'dev',
};
const cli = fileURLToPath(new URL('../src/cli/main.js', import.meta.url));
const bareServer = fileURLToPath(new URL('./bare-server.js', import.meta.url));
/** The REST load of the REST rows. */
const restShape = { connections: CONNECTIONS, seconds: LOAD_SECONDS };
const browserShape = {
  coldCalls: BROWSER_COLD_CALLS,
  warmCalls: BROWSER_WARM_CALLS,
  warmTarget: TARGET_BROWSER_WARM_RATIO,
};
/** The REST load the PostgreSQL rows put on their nodes: the SQLite row's. */
const postgresShape = {
  cli,
  body: echoBody,
  connections: CONNECTIONS,
  seconds: LOAD_SECONDS,
  warmupSeconds: LOAD_WARMUP_SECONDS,
};

type InProcess = Awaited<ReturnType<typeof inProcess>>;

async function inProcess(dataDir: string) {
  const { gateway, agent: principal } = await openDemoGateway(dataDir);
  try {
    const run = `bench-${Date.now()}`;
    const call = async (key: string): Promise<void> => {
      const record = await gateway.invocations.invoke(principal, {
        ...echoBody,
        idempotencyKey: key,
      });
      if (record.status !== 'observed') {
        throw new Error(`demo/echo ended ${record.status}: ${JSON.stringify(record.error)}`);
      }
    };
    await timeSequential(WARMUP_CALLS, (i) => call(`${run}-warm-${i}`));
    await timeConcurrent(WARMUP_CALLS, IN_FLIGHT, (i) => call(`${run}-warm16-${i}`));
    collectGarbage();
    const sequential = await timeSequential(MEASURED_CALLS, (i) => call(`${run}-seq-${i}`));
    collectGarbage();
    const concurrent = await timeConcurrent(MEASURED_CALLS, IN_FLIGHT, (i) =>
      call(`${run}-c16-${i}`),
    );
    collectGarbage();
    const cedar = await cedarFloor(gateway, FLOOR_OPS);
    if (cedar.decision !== 'allow') throw new Error(`demo/echo policy decision: ${cedar.decision}`);
    return { sequential, concurrent, cedar };
  } finally {
    await gateway.close();
  }
}

/** The in-process rows: governed echo sequential and with calls in flight. */
function inProcessRows(inproc: InProcess): string[][] {
  return [
    timingRow(
      'governed demo/echo, in-process, sequential',
      inproc.sequential,
      ms,
      `InvocationService.invoke, ${MEASURED_CALLS} calls`,
    ),
    timingRow(
      `governed demo/echo, in-process, ${IN_FLIGHT} in flight`,
      inproc.concurrent,
      ms,
      `${MEASURED_CALLS} calls`,
    ),
  ];
}

/** The in-process floors' rows: durable insert, Ed25519 signature, Cedar uncached and cached. */
function floorRows(insert: Timing, sign: Timing, cedar: InProcess['cedar']): string[][] {
  return [
    timingRow(
      'floor: durable SQLite insert, in-process',
      insert,
      ms,
      `WAL, synchronous=FULL, 1 commit each, ${INSERT_OPS} ops`,
    ),
    timingRow('floor: Ed25519 sign, 2 KiB payload', sign, us, 'node:crypto, KeyObject'),
    timingRow(
      'floor: Cedar decision, echo request, uncached',
      cedar.uncached,
      us,
      'TenantPolicy.evaluate, cacheSize 0',
    ),
    timingRow(
      'floor: Cedar decision, echo request, cached',
      cedar.cached,
      us,
      'TenantPolicy.evaluate, cache hit',
    ),
  ];
}

/** The sum of the in-process call's floors, as a line of the summary. */
function floorSumLine(insert: Timing, sign: Timing, cedar: InProcess['cedar']): string {
  const sum = insert.p50 + sign.p50 + cedar.uncached.p50;
  return `Floors of the in-process call: insert ${ms(insert.p50)} + sign ${us(sign.p50)} + uncached Cedar ${us(cedar.uncached.p50)} = ${ms(sum)}.\n`;
}

/** Starts a child server, warms it, then measures it (and its CPU time per call) under the load. */
async function underLoad(
  children: ChildServer[],
  args: string[],
  headers: (server: ChildServer) => Promise<Record<string, string>>,
): Promise<LoadResult & { cpuMsPerCall: number }> {
  const server = await spawnServer(args, {
    GATEHOUSE_LOG_REQUESTS: '0',
    GATEHOUSE_SYNCHRONOUS: 'full',
  });
  children.push(server);
  try {
    const load = {
      url: server.url,
      path: '/v1/invocations',
      body: echoBody,
      headers: await headers(server),
      connections: CONNECTIONS,
    };
    await postLoad({ ...load, seconds: LOAD_WARMUP_SECONDS });
    const cpuBefore = processCpuMs(server.pid);
    const result = await postLoad({ ...load, seconds: LOAD_SECONDS });
    const calls = Math.max(1, result.perSecond * LOAD_SECONDS);
    return { ...result, cpuMsPerCall: (processCpuMs(server.pid) - cpuBefore) / calls };
  } finally {
    await server.close();
  }
}

/** Governed echo over REST on a `gatehouse serve` child on its embedded SQLite, under the load. */
function restOnSqlite(
  root: string,
  children: ChildServer[],
): Promise<LoadResult & { cpuMsPerCall: number }> {
  const restDir = join(root, 'rest');
  return underLoad(
    children,
    [cli, 'serve', '--demo', '--data', restDir, '--port', '0'],
    async () => {
      const tokens = JSON.parse(
        await readFile(join(restDir, 'demo-tokens.json'), 'utf8'),
      ) as DemoTokens;
      return { authorization: `Bearer ${tokens.agent}` };
    },
  );
}

async function main(): Promise<void> {
  const root = await mkdtemp(join(tmpdir(), 'gatehouse-bench-'));
  const children: ChildServer[] = [];
  try {
    const started = Date.now();
    // The disk floor first, while the disk is quiet (no checkpoint of the gateway's file running).
    const insert = sqliteInsertFloor(join(root, 'insert.db'), INSERT_OPS, JSON.stringify(echoBody));
    const sign = signFloor(FLOOR_OPS);
    collectGarbage();
    const inproc = await inProcess(join(root, 'in-process'));

    const sandboxed = await sandboxBench(join(root, 'sandbox'), SANDBOX_IN_FLIGHT);

    const mcp = await mcpBench(join(root, 'mcp'), children, MCP_CALLS, MCP_WARMUP);
    const http = await httpBench(join(root, 'http'), HTTP_CALLS, HTTP_WARMUP);
    const memory = await memoryBench(join(root, 'memory'));
    const studio = await studioBench(join(root, 'studio'), STUDIO_VIEWS);
    const browser = await browserBench(
      join(root, 'browser'),
      BROWSER_COLD_CALLS,
      BROWSER_WARM_CALLS,
    );

    const rest = await restOnSqlite(root, children);
    const postgres = await postgresBench(join(root, 'postgres'), children, postgresShape);
    const streams = await streamsBench(join(root, 'streams'), children);
    const bareSingle = await underLoad(
      children,
      [bareServer, 'single', join(root, 'bare-single.db')],
      () => Promise.resolve({}),
    );
    const bareGroup = await underLoad(
      children,
      [bareServer, 'group', join(root, 'bare-group.db')],
      () => Promise.resolve({}),
    );

    const rows = [
      ...inProcessRows(inproc),
      loadRow(
        'governed demo/echo, REST (child process)',
        rest,
        restShape,
        `; gateway CPU ${rest.cpuMsPerCall.toFixed(2)} ms/call`,
      ),
      ...postgresRows(postgres, postgresShape),
      ...streams.map((c) => [
        `governed demo/echo, REST, ${c.readers} idle event-stream readers`,
        loadMs(c.rest.p50),
        loadMs(c.rest.p99),
        whole(c.rest.perSecond),
        `${STREAM_CONNECTIONS} conns, ${STREAM_SECONDS} s; /healthz p50 ${c.healthzP50.toFixed(1)} ms; gateway CPU ${c.cpuMsPerCall.toFixed(2)} ms/call`,
      ]),
      loadRow('floor: bare Fastify + 1 durable insert/request, no batching', bareSingle, restShape),
      loadRow('floor: bare Fastify + durable insert, group commit per turn', bareGroup, restShape),
      ...floorRows(insert, sign, inproc.cedar),
    ];
    rows.push(
      timingRow(
        'governed echo via /mcp → server-everything (stdio)',
        mcp.governed,
        ms,
        `SDK client, child gateway, ${MCP_CALLS} calls, taking turns with the two below`,
      ),
      timingRow(
        'floor: same client → server-everything direct (Streamable HTTP)',
        mcp.direct,
        ms,
        `child process, ${MCP_CALLS} calls, sequential`,
      ),
      timingRow(
        'ungoverned proxy: same client → supergateway → server-everything (stdio)',
        mcp.proxied,
        ms,
        `supergateway 4, stateful, no logs, ${MCP_CALLS} calls`,
      ),
    );
    rows.push(
      timingRow(
        'governed tickets/get-ticket (http tool) → demo ticket service',
        http.governed,
        ms,
        `in-process, ${HTTP_CALLS} calls, taking turns with the row below`,
      ),
      timingRow(
        'floor: the same GET with plain fetch (keep-alive)',
        http.direct,
        ms,
        `${HTTP_CALLS} calls, sequential`,
      ),
    );
    rows.push(...memoryRows(memory));
    rows.push(...studioRows(studio, STUDIO_VIEWS));
    rows.push(...browserRows(browser, browserShape));
    rows.push(...sandboxRows(sandboxed, SANDBOX_IN_FLIGHT));
    const out = process.stdout;
    out.write(
      `Gatehouse bench — node ${process.version}, ${cpus().length} CPUs, data in ${root}\n\n`,
    );
    out.write(`${formatTable(['measurement', 'p50', 'p99', 'calls/s', 'notes'], rows)}\n\n`);

    const floorSum = insert.p50 + sign.p50 + inproc.cedar.uncached.p50;
    out.write(floorSumLine(insert, sign, inproc.cedar));
    for (const [name, r] of [
      ['REST', rest],
      ['bare single', bareSingle],
      ['bare group', bareGroup],
    ] as const) {
      if (r.non2xx > 0 || r.errors > 0) {
        out.write(
          `${name}: ${r.non2xx} non-2xx, ${r.errors} errors; first: ${r.firstError ?? '-'}\n`,
        );
        process.exitCode = 1;
      }
    }
    const httpRatio = http.governed.p50 / http.direct.p50;
    out.write(
      `HTTP: governed p50 ${ms(http.governed.p50)} vs plain fetch ${ms(http.direct.p50)} = ${httpRatio.toFixed(2)}× ` +
        `(target ≤ ${TARGET_HTTP_RATIO}×, ${httpRatio <= TARGET_HTTP_RATIO ? 'met' : 'missed'}).\n` +
        // The call holds a brokered key: its issue is recorded durably before the request leaves,
        // and the outcome after, so two commits at synchronous=FULL are its least cost.
        `  Its floor, plain fetch + 2 durable commits (credential issue before the request, outcome after): ` +
        `${ms(http.direct.p50 + 2 * insert.p50)} = ${((http.direct.p50 + 2 * insert.p50) / http.direct.p50).toFixed(2)}× fetch.\n`,
    );
    out.write(studioSummary(studio, TARGET_STUDIO_MS));
    out.write(postgresSummary(postgres, rest));
    out.write(
      `\nPerformance targets:\n${targetLines({
        inProcess: { sequential: inproc.sequential, floorSum },
        rest,
        mcp,
        sandbox: sandboxed,
        memory,
      })
        .map((l) => `  ${l}\n`)
        .join('')}`,
    );
    out.write(`(${((Date.now() - started) / 1000).toFixed(0)} s)\n`);
  } finally {
    await Promise.all(children.map((c) => c.close()));
    await rm(root, { recursive: true, force: true });
  }
}

/** `BENCH_ONLY=inprocess`: only the in-process echo rows, their floors and target 1. */
async function inProcessOnly(): Promise<void> {
  const root = await mkdtemp(join(tmpdir(), 'gatehouse-bench-'));
  try {
    // The disk floor first, while the disk is quiet, as in the full run.
    const insert = sqliteInsertFloor(join(root, 'insert.db'), INSERT_OPS, JSON.stringify(echoBody));
    const sign = signFloor(FLOOR_OPS);
    collectGarbage();
    const inproc = await inProcess(join(root, 'in-process'));
    const floorSum = insert.p50 + sign.p50 + inproc.cedar.uncached.p50;
    process.stdout.write(
      `Gatehouse bench (BENCH_ONLY=inprocess) — node ${process.version}, ${cpus().length} CPUs\n\n` +
        `${formatTable(
          ['measurement', 'p50', 'p99', 'calls/s', 'notes'],
          [...inProcessRows(inproc), ...floorRows(insert, sign, inproc.cedar)],
        )}\n\n` +
        floorSumLine(insert, sign, inproc.cedar) +
        `${inProcessTargetLine({ sequential: inproc.sequential, floorSum })}\n`,
    );
  } finally {
    await rm(root, { recursive: true, force: true });
  }
}

/** `BENCH_ONLY=browser`: only the browser and computer-use rows, in one table. */
async function browserOnly(): Promise<void> {
  const root = await mkdtemp(join(tmpdir(), 'gatehouse-bench-'));
  try {
    const b = await browserBench(join(root, 'browser'), BROWSER_COLD_CALLS, BROWSER_WARM_CALLS);
    process.stdout.write(
      `Gatehouse bench (BENCH_ONLY=browser) — node ${process.version}, ${cpus().length} CPUs\n\n` +
        `${formatTable(['measurement', 'p50', 'p99', 'calls/s', 'notes'], browserRows(b, browserShape))}\n`,
    );
  } finally {
    await rm(root, { recursive: true, force: true });
  }
}

/** `BENCH_ONLY=studio`: only the Studio's first-view rows. */
async function studioOnly(): Promise<void> {
  const root = await mkdtemp(join(tmpdir(), 'gatehouse-bench-'));
  try {
    const studio = await studioBench(join(root, 'studio'), STUDIO_VIEWS);
    process.stdout.write(
      `Gatehouse bench (BENCH_ONLY=studio) — node ${process.version}, ${cpus().length} CPUs\n\n` +
        `${formatTable(['measurement', 'p50', 'p99', 'calls/s', 'notes'], studioRows(studio, STUDIO_VIEWS))}\n` +
        studioSummary(studio, TARGET_STUDIO_MS),
    );
  } finally {
    await rm(root, { recursive: true, force: true });
  }
}

/** `BENCH_ONLY=postgres`: governed echo over REST on SQLite, and on PostgreSQL with 1 and 2 nodes. */
async function postgresOnly(): Promise<void> {
  const root = await mkdtemp(join(tmpdir(), 'gatehouse-bench-'));
  const children: ChildServer[] = [];
  try {
    const rest = await restOnSqlite(root, children);
    const postgres = await postgresBench(join(root, 'postgres'), children, postgresShape);
    process.stdout.write(
      `Gatehouse bench (BENCH_ONLY=postgres) — node ${process.version}, ${cpus().length} CPUs\n\n` +
        `${formatTable(
          ['measurement', 'p50', 'p99', 'calls/s', 'notes'],
          [
            loadRow('governed demo/echo, REST (child process)', rest, restShape),
            ...postgresRows(postgres, postgresShape),
          ],
        )}\n` +
        postgresSummary(postgres, rest),
    );
  } finally {
    await Promise.all(children.map((c) => c.close()));
    await rm(root, { recursive: true, force: true });
  }
}

/** `BENCH_ONLY=memory`: only the memory rows (100 MB through shell, MCP, HTTP) and target 6. */
async function memoryOnly(): Promise<void> {
  const root = await mkdtemp(join(tmpdir(), 'gatehouse-bench-'));
  try {
    const memory = await memoryBench(join(root, 'memory'));
    process.stdout.write(
      `Gatehouse bench (BENCH_ONLY=memory) — node ${process.version}, ${cpus().length} CPUs\n\n` +
        `${formatTable(['measurement', 'p50', 'p99', 'calls/s', 'notes'], memoryRows(memory))}\n` +
        `${memoryTargetLine(memory)}\n`,
    );
  } finally {
    await rm(root, { recursive: true, force: true });
  }
}

/** `BENCH_ONLY=sandbox`: only the sandboxed demo/sh rows (cold, warm, bare) and target 4. */
async function sandboxOnly(): Promise<void> {
  const root = await mkdtemp(join(tmpdir(), 'gatehouse-bench-'));
  try {
    const sandboxed = await sandboxBench(join(root, 'sandbox'), SANDBOX_IN_FLIGHT);
    process.stdout.write(
      `Gatehouse bench (BENCH_ONLY=sandbox) — node ${process.version}, ${cpus().length} CPUs\n\n` +
        `${formatTable(['measurement', 'p50', 'p99', 'calls/s', 'notes'], sandboxRows(sandboxed, SANDBOX_IN_FLIGHT))}\n` +
        `${sandboxTargetLine(sandboxed)}\n`,
    );
  } finally {
    await rm(root, { recursive: true, force: true });
  }
}

const auditScale = auditScaleOptions(process.argv);
const only = process.env.BENCH_ONLY;
const alone: Record<string, () => Promise<void>> = {
  inprocess: inProcessOnly,
  browser: browserOnly,
  studio: studioOnly,
  postgres: postgresOnly,
  memory: memoryOnly,
  sandbox: sandboxOnly,
};
if (only !== undefined && !(only in alone))
  throw new Error(
    `BENCH_ONLY=${only}: the rows that can be run alone are: ${Object.keys(alone).join(', ')}`,
  );
await (auditScale ? auditScaleBench(auditScale) : only ? alone[only]!() : main());
