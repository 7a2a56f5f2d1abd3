/**
 * Memory under large output: 100 MB of tool output through each of the shell, MCP and HTTP
 * executors of one in-process demo gateway, and how much the gateway's RSS grew for each (after a
 * full collection, so garbage not yet collected is not counted; the peak while it ran beside it).
 * The upstreams (sandboxed shell, MCP server, HTTP server) are processes of their own, so the
 * growth is the gateway's alone. Shell needs the sandbox (bubblewrap); without it, it is skipped.
 */
import { loadConfig, openDemo } from '../src/app/index.js';
import type { InvocationRecord } from '../src/invocation/index.js';
import type { Principal } from '../src/tenancy/index.js';
import type { Gateway } from '../src/app/index.js';
import { startFloodHttp } from './flood-http.js';
import { publishMemoryTools } from './memory-tools.js';

/** Bytes of output pushed through each executor. */
export const MEMORY_BYTES = 100_000_000;
/** MCP answers are one message each (bounded by GATEHOUSE_MCP_MAX_MESSAGE_BYTES): 50 × 2 MB. */
const MCP_ANSWER_BYTES = 2_000_000;
/**
 * Output pushed before each measurement: the allocator's and V8's pools grow to their working size
 * on first use and do not shrink at once, which is not growth per output (a fifth of the run).
 */
const WARM_BYTES = MEMORY_BYTES / 5;

/** What one executor's 100 MB cost the gateway. */
export interface MemoryRow {
  /** RSS after minus RSS before, each after a full collection. */
  growthBytes: number;
  /** JS heap and buffers after minus before (what is retained, beside what the allocator keeps). */
  retainedBytes: number;
  /** Highest RSS while it ran, above the RSS before. */
  peakBytes: number;
  ms: number;
  /** How the 100 MB came (one call, or answers of a size). */
  shape: string;
}

export interface MemoryBench {
  shell: MemoryRow | { skipped: string };
  mcp: MemoryRow;
  http: MemoryRow;
}

/** Runs the three measurements on a fresh demo gateway in `dataDir`. */
export async function memoryBench(dataDir: string): Promise<MemoryBench> {
  const flood = await startFloodHttp();
  const config = loadConfig(
    { dataDir, port: 0, demo: true, logRequests: false, logLevel: 'warn' },
    {},
  );
  config.sandbox.egressAllow = [...config.sandbox.egressAllow, `127.0.0.1:${flood.port}`];
  const { gateway } = await openDemo(config);
  try {
    const agent = await publishMemoryTools(gateway, flood.port);
    const call = callOf(gateway, agent);
    const sandboxProblem = gateway.execution.sandboxProblem;
    const shellScript = (n: number) => `head -c ${n} /dev/zero | tr '\\0' a`;
    const shell = sandboxProblem
      ? { skipped: sandboxProblem }
      : await measure(
          () => call('demo/sh', { script: shellScript(WARM_BYTES) }),
          () => call('demo/sh', { script: shellScript(MEMORY_BYTES) }),
          '1 call, stdout',
        );
    const answers = async (bytes: number): Promise<void> => {
      for (let i = 0; i < bytes / MCP_ANSWER_BYTES; i++)
        await call('bench/mcp-flood', { bytes: MCP_ANSWER_BYTES });
    };
    const mcp = await measure(
      () => answers(WARM_BYTES),
      () => answers(MEMORY_BYTES),
      `${MEMORY_BYTES / MCP_ANSWER_BYTES} answers of ${MCP_ANSWER_BYTES / 1e6} MB, stdio`,
    );
    const http = await measure(
      () => call('bench/http-flood', { bytes: WARM_BYTES }),
      () => call('bench/http-flood', { bytes: MEMORY_BYTES }),
      '1 call, body',
    );
    return { shell, mcp, http };
  } finally {
    await gateway.close();
    await flood.close();
  }
}

/** One governed call that must end observed with its output cut and kept as an artifact. */
function callOf(
  g: Gateway,
  agent: Principal,
): (tool: string, input: Record<string, unknown>) => Promise<void> {
  let n = 0;
  return async (tool, input) => {
    const r = await g.invocations.invoke(agent, {
      tool: { id: tool, version: '1.0.0' },
      input,
      environment: 'dev',
      idempotencyKey: `memory-${Date.now()}-${++n}`,
    });
    if (r.status !== 'observed')
      throw new Error(`${tool} ended ${r.status}: ${JSON.stringify(r.error)}`);
    if (!keptAsArtifact(r)) throw new Error(`${tool}'s large output was not cut to an artifact`);
  };
}

/** Whether the output names the artifact of a cut part (shell stdout, HTTP body, MCP answer). */
function keptAsArtifact(r: InvocationRecord): boolean {
  const o = r.output as Record<string, { artifact?: unknown } | undefined> | null;
  const cut = o?.stdoutTruncated ?? o?.bodyTruncated ?? o?.truncated;
  return typeof cut?.artifact === 'string';
}

/** Warms with `warm`, then measures `run`: RSS growth after full collections, and the peak. */
async function measure(
  warm: () => Promise<void>,
  run: () => Promise<void>,
  shape: string,
): Promise<MemoryRow> {
  await warm();
  await collect();
  const start = process.memoryUsage();
  const before = start.rss;
  let peak = before;
  const sampler = setInterval(() => (peak = Math.max(peak, process.memoryUsage().rss)), 20);
  const started = performance.now();
  try {
    await run();
  } finally {
    clearInterval(sampler);
  }
  const ms = performance.now() - started;
  await collect();
  const end = process.memoryUsage();
  const after = end.rss;
  return {
    growthBytes: after - before,
    retainedBytes: end.heapUsed + end.external - start.heapUsed - start.external,
    peakBytes: Math.max(peak, after) - before,
    ms,
    shape,
  };
}

/** Two full collections a turn apart (buffers freed by a callback go in the second). */
async function collect(): Promise<void> {
  const gc = (globalThis as { gc?: () => void }).gc;
  if (!gc) throw new Error('the memory bench needs node --expose-gc (npm run bench runs it so)');
  gc();
  await new Promise((ok) => setImmediate(ok));
  gc();
}

const mb = (bytes: number): string => `${(bytes / 1024 / 1024).toFixed(1)} MiB`;

/** The bench table's rows: one per executor, its growth and peak in the notes. */
export function memoryRows(m: MemoryBench): string[][] {
  const row = (name: string, r: MemoryRow | { skipped: string }): string[] =>
    'skipped' in r
      ? [`${name}: skipped`, '-', '-', '-', r.skipped]
      : [
          name,
          '-',
          '-',
          '-',
          `RSS growth ${mb(r.growthBytes)} (heap and buffers ${mb(r.retainedBytes)}), peak +${mb(r.peakBytes)}; ${r.shape}; ${(r.ms / 1000).toFixed(1)} s`,
        ];
  return [
    row('memory: 100 MB of output, shell (demo/sh)', m.shell),
    row('memory: 100 MB of output, MCP (flood upstream)', m.mcp),
    row('memory: 100 MB of output, HTTP (flood server)', m.http),
  ];
}

/** Target 6's line: each executor's growth against the 32 MiB bound, met or missed. */
export function memoryTargetLine(m: MemoryBench): string {
  const bound = 32 * 1024 * 1024;
  const measured = Object.entries(m).flatMap(
    ([name, r]: [string, MemoryRow | { skipped: string }]) =>
      'skipped' in r ? [] : [{ name, growth: r.growthBytes }],
  );
  const values = measured.map((r) => `${r.name} ${mb(r.growth)}`).join(', ');
  const met = measured.every((r) => r.growth < bound);
  const skipped = 'skipped' in m.shell ? `; shell not measured (${m.shell.skipped})` : '';
  return `6. gateway RSS growth < 32 MiB for 100 MB of output through shell, MCP and HTTP: ${values}${skipped} (${met && skipped === '' ? 'met' : 'missed'})`;
}
