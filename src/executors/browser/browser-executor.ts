import type {
  ExecutionReport,
  ExecutionRequest,
  Executor,
  LeaseNeed,
} from '../../invocation/index.js';
import { abortCode } from '../../invocation/index.js';
import type { SchemaViolation, ToolDescriptor } from '../../tools/index.js';
import { browserExecutionProblem, viewportOf } from './browser-execution.js';
import { openBrowserSession } from './browser-session.js';
import type { BrowserSession, ConfiningSandbox } from './browser-session.js';
import { browserInputProblems, fillableSecrets } from './browser-steps.js';
import type { BrowserStep } from './browser-steps.js';
import { StepRefused, runStep } from './run-step.js';
import type { LeaseKeeper } from '../../sandbox/index.js';
import { startWarmBrowser, warmBrowsers } from './warm-browsers.js';
import type { WarmBrowser, WarmScratch } from './warm-browsers.js';
import type { BoundSecret, StepResult } from './run-step.js';

/** Time kept back from the call's timeout for closing the browser and reporting. */
const CLOSE_MARGIN_MS = 1000;

/**
 * Runs `browser` descriptors (DESIGN §10): Chromium in the call's sandbox lease (its limits, its
 * egress proxy, a fresh profile in its workspace), driven by Playwright over a pipe, one step
 * after another. All steps done is observed; a refused or failed step, a crash, a limit or a
 * timeout is stopped, with an effect that may have started once a page was loaded (judgeExecution
 * makes that uncertain for a call that can change things). Nothing of Chromium outlives the call:
 * its cgroup is emptied and removed.
 */
export class BrowserExecutor implements Executor {
  readonly lease: LeaseNeed = { kind: 'sandbox' };
  private readonly warm: LeaseKeeper<WarmBrowser> | null;
  private readonly where: WarmScratch;

  /**
   * Without a sandbox (this machine cannot run one) descriptors validate but calls fail before
   * effect. `scratch` is a directory of this gateway's for each call's launcher and Chromium
   * policy, which the sandbox user can pass through (mode 0711); the gateway empties it at start,
   * so a crash leaves nothing there for long. Default: the system's temporary directory.
   */
  constructor(
    private readonly sandbox?: ConfiningSandbox,
    private readonly scratch?: string,
    owner: { uid: number; gid: number } | null = null,
  ) {
    this.warm = sandbox ? warmBrowsers() : null;
    this.where = { owner, ...(scratch === undefined ? {} : { scratch }) };
  }

  /** Kills the warm browsers of a lease that ended (released or reaped). */
  endLease(leaseId: string): Promise<void> {
    return this.warm?.endLease(leaseId) ?? Promise.resolve();
  }

  /** Kills every warm browser (the gateway is closing). Safe twice. */
  close(): Promise<void> {
    return this.warm?.close() ?? Promise.resolve();
  }

  check(d: ToolDescriptor): string | null {
    return browserExecutionProblem(d);
  }

  inputCheck(d: ToolDescriptor): (input: unknown) => SchemaViolation[] {
    return (input) => browserInputProblems(d, input);
  }

  async execute(req: ExecutionRequest): Promise<ExecutionReport> {
    const { lease, signal } = req;
    if (!this.sandbox)
      return notRun('SANDBOX_UNAVAILABLE', 'this gateway has no sandbox; nothing ran');
    if (!lease)
      return notRun(
        'NO_LEASE',
        'a browser tool runs only in a sandbox lease, and none was granted',
      );
    const steps = (req.input as { steps: BrowserStep[] }).steps;
    const secrets = new Map<string, BoundSecret>();
    for (const [name, { env, origin }] of fillableSecrets(req.descriptor)) {
      const value = lease.env[env];
      if (value !== undefined) secrets.set(name, { value, origin });
    }
    const deadline = Date.now() + req.timeoutMs - CLOSE_MARGIN_MS;
    const left = (): number => Math.max(1, deadline - Date.now());
    if (signal.aborted)
      return notRun(abortCode(signal), 'the call was aborted before the browser started');
    let session: BrowserSession;
    let warm: WarmBrowser | null = null;
    let fresh = true;
    try {
      const viewport = viewportOf(req.descriptor);
      if (lease.attempt && this.warm) {
        const tool = `${req.descriptor.id}@${req.descriptor.version}`;
        const [sandbox, timeoutMs] = [this.sandbox, left()];
        ({ value: warm, fresh } = await this.warm.get(lease.id, tool, (n) =>
          startWarmBrowser(sandbox, this.where, lease, viewport, timeoutMs, n),
        ));
        session = warm.session;
        session.takeEvents(); // what pages did between calls is no call's
      } else {
        session = await openBrowserSession({
          sandbox: this.sandbox,
          lease,
          viewport,
          timeoutMs: left(),
          ...(this.scratch === undefined ? {} : { scratch: this.scratch }),
        });
      }
    } catch (err) {
      return notRun('BROWSER_START', `the browser did not start: ${gist(err)}`);
    }
    // An abort (timeout, revocation, shutdown) kills the browser; the running step then fails.
    const kill = (): void => void session.close();
    signal.addEventListener('abort', kill, { once: true });
    // A warm browser's network is this call's egress endpoint while the call runs, and none after.
    warm?.useEgress(lease.egressSocket);
    // What it tried while no call ran goes on this call's record, before this call's own.
    for (const refused of warm?.takeRefused() ?? []) req.onEgress?.(refused);
    const kept = warm === null ? {} : { browser: fresh ? 'started' : 'kept' };
    const results: StepResult[] = [];
    let keep = warm !== null;
    try {
      for (const [index, step] of steps.entries()) {
        try {
          results.push(
            await runStep(step, {
              page: session.page,
              secrets,
              timeoutMs: left,
              ...(req.storeArtifact ? { storeArtifact: req.storeArtifact } : {}),
            }),
          );
        } catch (err) {
          const report = await stopped(req, session, results, { index, step, err }, deadline, kept);
          // A browser that timed out, hit a limit or died is not kept: the next call starts anew.
          keep &&= report.code === 'STEP_FAILED' || err instanceof StepRefused;
          keep &&= session.running();
          return report;
        }
      }
      return { status: 'observed', output: { ...(await finalOutput(session, results)), ...kept } };
    } finally {
      signal.removeEventListener('abort', kill);
      warm?.useEgress(null);
      if (!keep) await session.close();
    }
  }
}

/** The output: each step's result, where the page ended and its title, new windows, refused downloads. */
async function finalOutput(
  session: BrowserSession,
  steps: StepResult[],
): Promise<Record<string, unknown>> {
  const page = session.page;
  const title = page.isClosed()
    ? null
    : await Promise.race([
        page.title().catch(() => null),
        new Promise<null>((resolve) => setTimeout(() => resolve(null), 2000).unref()),
      ]);
  const { popups, downloadsRefused, unlisted } = session.takeEvents();
  return {
    steps,
    url: page.isClosed() ? null : page.url(),
    title,
    ...(popups.length > 0 ? { popups } : {}),
    ...(downloadsRefused.length > 0 ? { downloadsRefused } : {}),
    ...(unlisted > 0 ? { unlistedEvents: unlisted } : {}),
  };
}

/**
 * A step that did not finish: why (the call's abort, a cgroup limit, the step's own refusal or
 * failure), with the results so far. An effect may have started once any page was loaded.
 */
async function stopped(
  req: ExecutionRequest,
  session: BrowserSession,
  results: StepResult[],
  at: { index: number; step: BrowserStep; err: unknown },
  deadline: number,
  kept: Record<string, unknown>,
): Promise<Extract<ExecutionReport, { status: 'stopped' }>> {
  const { index, step, err } = at;
  const limit = session.usage().limitHit;
  // A step that waited until the call's time was spent is the call's timeout, not the step's fault.
  const outOfTime =
    !req.signal.aborted && (err as Error)?.name === 'TimeoutError' && Date.now() >= deadline - 50;
  const code = req.signal.aborted
    ? abortCode(req.signal)
    : outOfTime
      ? 'TIMEOUT'
      : limit !== null
        ? `LIMIT_${limit.toUpperCase()}`
        : err instanceof StepRefused
          ? err.code
          : 'STEP_FAILED';
  const why =
    req.signal.aborted || outOfTime
      ? code === 'TIMEOUT'
        ? `the call timed out after ${req.timeoutMs} ms`
        : `the call was aborted (${code})`
      : limit !== null
        ? `the browser hit the lease's ${limit} limit (${gist(err)})`
        : gist(err);
  const loaded =
    results.some((r) => r.action === 'goto') ||
    (step.action === 'goto' &&
      !(err instanceof StepRefused && !err.reachedServer) &&
      !notSent(err));
  const output = {
    ...(await finalOutput(session, results)),
    failed: { index, action: step.action, code, message: why },
    ...kept,
  };
  return {
    status: 'stopped',
    code,
    message: `step ${index} (${step.action}) did not finish: ${why}`,
    output,
    effectMayHaveStarted: loaded,
    ...(loaded ? { uncertainNote: 'after a page was loaded; an effect may have happened' } : {}),
  };
}

/** Whether a navigation failed before its request can have reached a server. */
function notSent(err: unknown): boolean {
  return /net::ERR_(TUNNEL_CONNECTION_FAILED|PROXY_CONNECTION_FAILED|CONNECTION_REFUSED|NAME_NOT_RESOLVED|BLOCKED_BY_ADMINISTRATOR|BLOCKED_BY_CLIENT|ADDRESS_UNREACHABLE)/.test(
    (err as Error)?.message ?? '',
  );
}

/** A call that ended before any page was loaded: nothing took effect. */
function notRun(code: string, message: string): ExecutionReport {
  return { status: 'stopped', code, message, effectMayHaveStarted: false };
}

/** The first line of an error, bounded (Playwright appends its call log). */
function gist(err: unknown): string {
  const text = err instanceof Error ? err.message : String(err);
  return (text.split('\n')[0] ?? '').slice(0, 500);
}
