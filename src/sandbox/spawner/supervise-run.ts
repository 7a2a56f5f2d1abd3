import { NOT_STARTED_MARK } from '../bwrap/bwrap-args.js';
import type { SandboxKill, SandboxResult, SandboxSpec } from '../sandbox.js';
import type { Slot } from './slot-pool.js';
import type { SpawnerClient } from './spawner-client.js';

/** After bubblewrap exits and the cgroup is swept, how long its pipes may stay open. */
const RELEASE_AFTER_EXIT_MS = 2_000;

/**
 * Launches a slot (`launch`: a cold slot's line, or a warm sandbox's call; `warm` for the latter)
 * and follows it to its end: streams output to the spec, enforces the timeout
 * and the abort signal by killing the whole cgroup, sweeps the cgroup when bubblewrap exits (a
 * detached grandchild dies too), then reads usage and limit hits and removes the cgroup.
 * @throws whatever the spec's output callbacks threw (after the run is cleaned up).
 */
export function superviseRun(
  spec: SandboxSpec,
  slot: Slot,
  spawner: SpawnerClient,
  launch: () => void,
  warm = false,
): Promise<SandboxResult> {
  const cgroup = slot.cgroup;
  return new Promise<SandboxResult>((resolve, reject) => {
    const t0 = performance.now();
    let killed: SandboxKill | null = null;
    let exit: { code: number | null; signal: string | null; at: number } | null = null;
    let callbackError: unknown = null;
    let finished = false;
    let releaseTimer: NodeJS.Timeout | undefined;

    // killAll() passes run one after another; a failure leaves the cgroup for reapOrphans().
    let sweeping: Promise<void> = Promise.resolve();
    const sweep = (): Promise<void> =>
      (sweeping = sweeping.then(() => cgroup.killAll()).catch(() => undefined));

    const kill = (reason: SandboxKill): void => {
      if (killed !== null || exit !== null) return;
      killed = reason;
      spawner.kill(slot.key);
      void sweep();
    };
    const timer = setTimeout(() => kill('timeout'), spec.limits.timeoutMs);
    const onAbort = (): void => kill('abort');
    spec.signal.addEventListener('abort', onAbort, { once: true });

    const deliver = (callback: (chunk: Buffer) => void, chunk: Buffer): void => {
      if (callbackError !== null) return;
      try {
        callback(chunk);
      } catch (err) {
        callbackError = err;
        kill('abort');
      }
    };

    const finish = async (status: string, lost: boolean): Promise<void> => {
      if (finished) return;
      finished = true;
      clearTimeout(timer);
      clearTimeout(releaseTimer);
      spec.signal.removeEventListener('abort', onAbort);
      await sweep();
      const hit = cgroup.limitHit();
      const usage = cgroup.usage();
      await cgroup.remove().catch(() => undefined);
      if (callbackError !== null) {
        reject(
          callbackError instanceof Error ? callbackError : new Error('an output callback threw'),
        );
        return;
      }
      resolve({
        exitCode: exit?.code ?? null,
        signal: exit?.signal ?? null,
        // A warm stub says `exec` just before it execs the program; bubblewrap's status says
        // nothing of the program then (bubblewrap started the stub long before).
        started: warm ? slot.execed : wasStarted(status, exit, lost, slot.endedBeforeAttach),
        // A run that hit a limit and then ran out its time (a fork bomb spinning on failed forks)
        // was stopped by that limit: report the cause, not the clock.
        killed: killed === 'timeout' && hit !== null ? hit : (killed ?? hit),
        durationMs: Math.round((exit?.at ?? performance.now()) - t0),
        usage,
      });
    };

    slot.attach({
      warm: () => {},
      failed: (message) => deliver(spec.onStderr, Buffer.from(`gatehouse: ${message}\n`)),
      stdout: (chunk) => deliver(spec.onStdout, chunk),
      stderr: (chunk) => deliver(spec.onStderr, chunk),
      exit: (code, signal) => {
        exit = { code, signal, at: performance.now() };
        void sweep();
        releaseTimer = setTimeout(() => spawner.release(slot.key), RELEASE_AFTER_EXIT_MS);
      },
      closed: (status) => void finish(status, false),
      lost: () => void finish('', true),
    });
    // Aborted while the slot was being readied: end the slot without launching anything.
    if (spec.signal.aborted) kill('abort');
    else launch();
  });
}

/**
 * Whether the program was exec'd. bubblewrap writes `"exit-code"` to its status only when the exec
 * succeeded. Without it: a bubblewrap that exited with a code failed its setup (nothing ran); one
 * killed by a signal after it made the sandbox (`"child-pid"`) may have run the program, and so
 * may a run whose spawner died after the launch — counted as started, the safe side. With egress
 * bubblewrap execs the forwarder's shell, not the program: that shell writes NOT_STARTED_MARK
 * when it ends without exec'ing the program (which never holds that descriptor).
 */
function wasStarted(
  status: string,
  exit: { code: number | null } | null,
  lost: boolean,
  endedBeforeLaunch: boolean,
): boolean {
  if (status.includes(NOT_STARTED_MARK)) return false;
  if (status.includes('"exit-code"')) return true;
  if (endedBeforeLaunch) return false;
  if (lost) return true;
  return status.includes('"child-pid"') && (exit === null || exit.code === null);
}
