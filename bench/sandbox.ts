/** Sandboxed calls: demo/sh running `true` through the gateway, beside a bare bwrap with the same flags. */
import { spawn } from 'node:child_process';
import { chownSync, closeSync, mkdirSync, openSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { join } from 'node:path';
import { loadConfig, openDemo } from '../src/app/index.js';
import type { Gateway } from '../src/app/index.js';
import type { Principal } from '../src/tenancy/index.js';
import { BwrapSandbox } from '../src/sandbox/index.js';
import type { BareCommand } from '../src/sandbox/index.js';
import { collectGarbage, timeConcurrent, timeSequential } from './measure.js';
import type { Timing } from './measure.js';
import { ms, ratio, timingRow, verdict } from './rows.js';

const CALLS = Number(process.env.BENCH_SANDBOX_CALLS ?? 200);
const WARMUP = 20;
/** Warm sandboxes kept by the warm-pool gateway: one per call in flight. */
const WARM_SIZE = 8;
/** Longest wait for the pool to refill before a measured call or round. */
const REFILL_WAIT_MS = 10_000;

/** What {@link sandboxBench} measured. */
export interface SandboxBench {
  governed: Timing;
  governedConcurrent: Timing;
  bare: Timing;
  bareConcurrent: Timing;
  bareEgress: Timing;
  warm: Timing;
  warmConcurrent: Timing;
  /** Share of the measured warm-row calls that got a warm sandbox. */
  warmShare: number;
}

/** Governed sandboxed calls at 1 and `inFlight` in flight, and bare bwrap the same way. */
export async function sandboxBench(
  dataDir: string,
  inFlight: number,
): Promise<SandboxBench | { skipped: string }> {
  const config = loadConfig({ dataDir, port: 0, demo: true, logRequests: false }, {});
  roomFor(config, inFlight);
  const warmRows = await warmBench(dataDir, inFlight);
  if ('skipped' in warmRows) return warmRows;
  const { gateway, tokens } = await openDemo(config);
  try {
    if (gateway.execution.sandboxProblem) return { skipped: gateway.execution.sandboxProblem };
    const agent = gateway.directory.authenticate(tokens.agent)!;
    const call = shTrue(gateway, agent);
    await timeSequential(WARMUP, (i) => call(`warm-${i}`));
    collectGarbage();
    const governed = await timeSequential(CALLS, (i) => call(`seq-${i}`));
    const governedConcurrent = await timeConcurrent(CALLS, inFlight, (i) => call(`c-${i}`));
    const sandbox = await BwrapSandbox.start({
      stateDir: join(dataDir, 'bare-state'),
      cgroupParent: 'gatehouse-bench',
    });
    try {
      const workspace = join(config.sandbox.root, 'bare-workspace');
      mkdirSync(workspace, { recursive: true, mode: 0o700 });
      chownSync(workspace, 65534, 65534);
      const spec = {
        id: 'bench',
        argv: ['true'],
        env: { PATH: '/usr/bin:/bin' },
        workspace,
        readOnlyMounts: [],
        limits: { memoryBytes: 256 * 1024 * 1024, cpus: 0.5, pids: 64, timeoutMs: 10_000 },
        egressSocket: null,
        onStdout: () => undefined,
        onStderr: () => undefined,
        signal: new AbortController().signal,
      };
      const command = sandbox.bareCommand(spec);
      await timeSequential(WARMUP, () => runBare(command));
      const bare = await timeSequential(CALLS, () => runBare(command));
      const bareConcurrent = await timeConcurrent(CALLS, inFlight, () => runBare(command));
      // The same with the in-sandbox egress forwarder (socat, and the wait until it listens) that
      // every call of a tool with egress starts; a socket that accepts nothing stands in for the proxy.
      const socket = join(config.sandbox.root, 'bare-egress.sock');
      const listener = createServer();
      await new Promise<void>((ok) => listener.listen(socket, ok));
      chownSync(socket, 65534, 65534);
      try {
        const withEgress = sandbox.bareCommand({ ...spec, egressSocket: socket });
        await timeSequential(WARMUP, () => runBare(withEgress));
        const bareEgress = await timeSequential(CALLS, () => runBare(withEgress));
        return { governed, governedConcurrent, bare, bareConcurrent, bareEgress, ...warmRows };
      } finally {
        await new Promise<void>((ok) => listener.close(() => ok()));
      }
    } finally {
      await sandbox.close();
      rmSync(join(config.sandbox.root, 'bare-workspace'), { recursive: true, force: true });
    }
  } finally {
    await gateway.close();
  }
}

/** Room for every call in flight: the bench measures the sandbox, not the queue. */
function roomFor(config: ReturnType<typeof loadConfig>, inFlight: number): void {
  config.sandbox.pool = {
    name: 'default',
    cpus: inFlight,
    memoryBytes: inFlight * 512 * 1024 * 1024,
    gpus: 0,
    leases: inFlight * 2,
  };
}

/**
 * The same calls through a gateway with a warm pool of {@link WARM_SIZE}: sequential, and rounds
 * of `inFlight` calls at once, each started on a full pool at rest (the wait for the refill
 * untimed). A steady stream faster than the refill (a cold start per sandbox) finds
 * the pool empty and starts cold: the rows measure the warm path, `warmShare` says how many
 * measured calls took it.
 */
async function warmBench(
  dataDir: string,
  inFlight: number,
): Promise<{ warm: Timing; warmConcurrent: Timing; warmShare: number } | { skipped: string }> {
  const config = loadConfig(
    { dataDir: join(dataDir, 'warm'), port: 0, demo: true, logRequests: false },
    {},
  );
  roomFor(config, inFlight);
  config.sandbox.warm = {
    size: Math.max(WARM_SIZE, inFlight),
    refill: 2,
    memoryMb: 512,
    egress: true,
  };
  const { gateway, tokens } = await openDemo(config);
  try {
    if (gateway.execution.sandboxProblem) return { skipped: gateway.execution.sandboxProblem };
    const pool = gateway.execution.warmPool;
    if (pool === undefined) return { skipped: 'no warm pool here (it needs cgroup v1)' };
    const agent = gateway.directory.authenticate(tokens.agent)!;
    const call = shTrue(gateway, agent);
    // Each measured call or round starts on a full pool at rest (no refill running beside it): the
    // warm path itself, as a call sees it when the refill keeps up with the calls.
    const refilled = async (): Promise<void> => {
      const deadline = Date.now() + REFILL_WAIT_MS;
      while (!pool.settled && Date.now() < deadline) await sleep(5);
    };
    for (let i = 0; i < WARMUP; i++) {
      await refilled();
      await call(`warm-w-${i}`);
    }
    collectGarbage();
    const taken = pool.counts.taken;
    const seq: number[] = [];
    for (let i = 0; i < CALLS; i++) {
      await refilled();
      const t = performance.now();
      await call(`warm-s-${i}`);
      seq.push(performance.now() - t);
    }
    const conc: number[] = [];
    let roundsMs = 0;
    for (let round = 0; round < CALLS / inFlight; round++) {
      await refilled();
      const start = performance.now();
      await Promise.all(
        Array.from({ length: inFlight }, async (_, j) => {
          const t = performance.now();
          await call(`warm-c-${round}-${j}`);
          conc.push(performance.now() - t);
        }),
      );
      roundsMs += performance.now() - start;
    }
    return {
      warm: summary(seq),
      warmConcurrent: { ...summary(conc), perSecond: conc.length / (roundsMs / 1000) },
      warmShare: (pool.counts.taken - taken) / (seq.length + conc.length),
    };
  } finally {
    await gateway.close();
  }
}

/** p50 and p99 of samples in ms; calls/s over their summed time (refill waits left out). */
function summary(samplesMs: readonly number[]): Timing {
  const sorted = [...samplesMs].sort((a, b) => a - b);
  const at = (p: number) =>
    sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
  return {
    p50: at(50),
    p99: at(99),
    perSecond: samplesMs.length / (samplesMs.reduce((a, b) => a + b, 0) / 1000),
  };
}

function runBare(c: BareCommand): Promise<void> {
  return new Promise((resolve, reject) => {
    const fd = openSync(c.seccompPath, 'r');
    const child = spawn(c.file, c.args, {
      stdio: ['ignore', 'ignore', 'pipe', fd],
      ...(c.user ? { uid: c.user.uid, gid: c.user.gid } : {}),
    });
    let err = '';
    child.stderr?.on('data', (d: Buffer) => (err += d.toString()));
    child.on('error', reject);
    child.on('exit', (code) => {
      closeSync(fd);
      if (code === 0) resolve();
      else reject(new Error(`bare bwrap exited ${code}: ${err}`));
    });
  });
}

/** One governed `demo/sh` call running `true`, named by its idempotency key; throws unless observed. */
function shTrue(gateway: Gateway, agent: Principal): (key: string) => Promise<void> {
  return async (key) => {
    const r = await gateway.invocations.invoke(agent, {
      tool: { id: 'demo/sh', version: '1.0.0' },
      input: { script: 'true' },
      environment: 'dev',
      idempotencyKey: key,
    });
    if (r.status !== 'observed')
      throw new Error(`demo/sh ended ${r.status}: ${JSON.stringify(r.error)}`);
  };
}

/** The table rows of a sandbox run (`inFlight` calls at once in the concurrent rows). */
export function sandboxRows(s: SandboxBench | { skipped: string }, inFlight: number): string[][] {
  if ('skipped' in s) return [['sandboxed demo/sh `true`: skipped', '-', '-', '-', s.skipped]];
  return [
    timingRow(
      'sandboxed demo/sh `true`, governed, sequential',
      s.governed,
      ms,
      'full pipeline, credential, lease, egress, cgroup',
    ),
    timingRow(
      `sandboxed demo/sh \`true\`, governed, ${inFlight} in flight`,
      s.governedConcurrent,
      ms,
      '',
    ),
    timingRow(
      'sandboxed demo/sh `true`, governed, warm pool, sequential',
      s.warm,
      ms,
      `pool of ${Math.max(WARM_SIZE, inFlight)} (refill 2); each call on a full pool at rest (refill wait untimed); ${Math.round(s.warmShare * 100)}% of warm-row calls took one`,
    ),
    timingRow(
      `sandboxed demo/sh \`true\`, governed, warm pool, ${inFlight} in flight`,
      s.warmConcurrent,
      ms,
      `rounds of ${inFlight} at once, each on a full pool at rest; calls/s over the rounds`,
    ),
    timingRow(
      'floor: bare bwrap `true`, same flags, sequential',
      s.bare,
      ms,
      'spawned directly, no cgroup',
    ),
    timingRow(
      `floor: bare bwrap \`true\`, same flags, ${inFlight} in flight`,
      s.bareConcurrent,
      ms,
      '',
    ),
    timingRow(
      'floor: bare bwrap `true` + egress forwarder, sequential',
      s.bareEgress,
      ms,
      'socat started and awaited in the sandbox, as with egress',
    ),
  ];
}

/** Target 4: what it asks, what this run measured, met or missed. */
export function sandboxTargetLine(s: SandboxBench | { skipped: string }): string {
  if ('skipped' in s) return `4. sandboxed call: not measured (${s.skipped})`;
  const one = s.governed.p50 / s.bare.p50;
  const eight = s.governedConcurrent.p50 / s.bareConcurrent.p50;
  return `4. sandboxed demo/sh true p50 ≤ 1.3× bare bwrap, 1 and 8 in flight: ${one.toFixed(2)}× and ${eight.toFixed(2)}× (${verdict(one <= 1.3 && eight <= 1.3)}); warm pool p50 ${ms(s.warm.p50)} sequential, ${ms(s.warmConcurrent.p50)} 8 in flight (${Math.round(s.warmShare * 100)}% warm), far below bare: ${ratio(s.warm.p50, s.bare.p50)} and ${ratio(s.warmConcurrent.p50, s.bareConcurrent.p50)} (${verdict(s.warm.p50 <= 0.5 * s.bare.p50 && s.warmConcurrent.p50 <= 0.5 * s.bareConcurrent.p50)}); moonshot ≤ 5 ms (${verdict(s.warm.p50 <= 5)})`;
}
