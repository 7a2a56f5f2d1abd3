/** Sandboxed calls: demo/sh running `true` through the gateway, beside a bare bwrap with the same flags. */
import { spawn } from 'node:child_process';
import { chownSync, closeSync, mkdirSync, openSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { loadConfig, openDemo } from '../src/app/index.js';
import { BwrapSandbox } from '../src/sandbox/index.js';
import type { BareCommand } from '../src/sandbox/index.js';
import { collectGarbage, timeConcurrent, timeSequential } from './measure.js';
import type { Timing } from './measure.js';

const CALLS = 200;
const WARMUP = 20;

/** Governed sandboxed calls at 1 and `inFlight` in flight, and bare bwrap the same way. */
export async function sandboxBench(
  dataDir: string,
  inFlight: number,
): Promise<
  | {
      governed: Timing;
      governedConcurrent: Timing;
      bare: Timing;
      bareConcurrent: Timing;
      bareEgress: Timing;
    }
  | { skipped: string }
> {
  const config = loadConfig({ dataDir, port: 0, demo: true, logRequests: false }, {});
  // Room for every call in flight: the bench measures the sandbox, not the queue.
  config.sandbox.pool = {
    name: 'default',
    cpus: inFlight,
    memoryBytes: inFlight * 512 * 1024 * 1024,
    gpus: 0,
    leases: inFlight * 2,
  };
  const { gateway, tokens } = await openDemo(config);
  try {
    if (gateway.execution.sandboxProblem) return { skipped: gateway.execution.sandboxProblem };
    const agent = gateway.directory.authenticate(tokens.agent)!;
    const call = async (key: string): Promise<void> => {
      const r = await gateway.invocations.invoke(agent, {
        tool: { id: 'demo/sh', version: '1.0.0' },
        input: { script: 'true' },
        environment: 'dev',
        idempotencyKey: key,
      });
      if (r.status !== 'observed')
        throw new Error(`demo/sh ended ${r.status}: ${JSON.stringify(r.error)}`);
    };
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
        return { governed, governedConcurrent, bare, bareConcurrent, bareEgress };
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
