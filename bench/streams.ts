/**
 * What idle event-stream readers cost the gateway: the governed echo over REST under load, and
 * `/healthz` latency meanwhile, without readers and with 200 open (each reading every event).
 * Also the gateway's CPU time per call, which the machine's other load does not blur. The readers
 * run in a child process of their own (stream-readers.ts), apart from the load generator.
 *
 *   node dist-bench/bench/streams.js      (after tsc -p tsconfig.bench.json)
 */
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { DemoTokens } from '../src/app/index.js';
import { postLoad, spawnServer } from './load.js';
import type { ChildServer, LoadResult } from './load.js';
import { percentile, processCpuMs } from './measure.js';

/** Event-stream readers open in the second measurement. */
export const STREAM_READERS = 200;
/** Connections of the echo load. */
export const STREAM_CONNECTIONS = 20;
/** Seconds the echo load runs. */
export const STREAM_SECONDS = 6;
const READERS = STREAM_READERS;
const CONNECTIONS = STREAM_CONNECTIONS;
const SECONDS = STREAM_SECONDS;

/** One configuration's numbers. */
export interface StreamCost {
  readers: number;
  rest: LoadResult;
  /** `/healthz` median and 99th percentile while the load runs, in ms. */
  healthzP50: number;
  healthzP99: number;
  /** The gateway's CPU (user + system) per governed call, in ms. */
  cpuMsPerCall: number;
}

const cli = fileURLToPath(new URL('../src/cli/main.js', import.meta.url));
const streamReaders = fileURLToPath(new URL('./stream-readers.js', import.meta.url));

async function measure(server: ChildServer, token: string, readers: number): Promise<StreamCost> {
  const load = {
    url: server.url,
    path: '/v1/invocations',
    body: {
      tool: { id: 'demo/echo', version: '1.0.0' },
      input: { message: 'hi' },
      environment: 'dev',
    },
    headers: { authorization: `Bearer ${token}` },
    connections: CONNECTIONS,
  };
  await postLoad({ ...load, seconds: 1 });
  const cpuBefore = processCpuMs(server.pid);
  const running = postLoad({ ...load, seconds: SECONDS });
  const latencies: number[] = [];
  const end = Date.now() + (SECONDS - 1) * 1000;
  while (Date.now() < end) {
    const t = performance.now();
    await (await fetch(`${server.url}/healthz`)).text();
    latencies.push(performance.now() - t);
    await new Promise((r) => setTimeout(r, 20));
  }
  const rest = await running;
  // Throughput counts every answer: it means governed calls only when every answer was one.
  if (rest.non2xx + rest.errors > 0) {
    throw new Error(
      `echo load with ${readers} readers: ${rest.non2xx} non-2xx answers, ${rest.errors} errors`,
    );
  }
  const calls = rest.perSecond * SECONDS;
  return {
    readers,
    rest,
    healthzP50: percentile(latencies, 50),
    healthzP99: percentile(latencies, 99),
    cpuMsPerCall: (processCpuMs(server.pid) - cpuBefore) / Math.max(1, calls),
  };
}

/** Measures the echo load and /healthz with no readers, then with {@link READERS} open. */
export async function streamsBench(
  dataDir: string,
  children: ChildServer[],
): Promise<StreamCost[]> {
  const server = await spawnServer([cli, 'serve', '--demo', '--data', dataDir, '--port', '0'], {
    GATEHOUSE_LOG_REQUESTS: '0',
    GATEHOUSE_STREAM_MAX_PER_PRINCIPAL: String(READERS),
    GATEHOUSE_STREAM_MAX_PER_TENANT: String(READERS),
    GATEHOUSE_STREAM_MAX_CLIENTS: String(READERS),
  });
  children.push(server);
  try {
    const tokens = JSON.parse(
      await readFile(join(dataDir, 'demo-tokens.json'), 'utf8'),
    ) as DemoTokens;
    const without = await measure(server, tokens.agent, 0);
    const readers = await spawnServer(
      [streamReaders, server.url, tokens.operator, String(READERS)],
      {},
      (output) => (output.includes(`${READERS} readers open`) ? server.url : null),
    );
    children.push(readers);
    try {
      const withReaders = await measure(server, tokens.agent, READERS);
      return [without, withReaders];
    } finally {
      await readers.close();
    }
  } finally {
    await server.close();
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const root = await mkdtemp(join(tmpdir(), 'gatehouse-bench-streams-'));
  const children: ChildServer[] = [];
  try {
    for (const c of await streamsBench(join(root, 'streams'), children)) {
      process.stdout.write(
        `${c.readers} readers: echo ${Math.round(c.rest.perSecond)} calls/s (p50 ${c.rest.p50} ms), /healthz p50 ${c.healthzP50.toFixed(1)} ms p99 ${c.healthzP99.toFixed(1)} ms, gateway CPU ${c.cpuMsPerCall.toFixed(2)} ms/call\n`,
      );
    }
  } finally {
    await Promise.all(children.map((c) => c.close()));
    await rm(root, { recursive: true, force: true });
  }
}
