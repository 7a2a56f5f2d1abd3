import type {
  ExecutionReport,
  ExecutionRequest,
  Executor,
  LeaseNeed,
} from '../../invocation/index.js';
import { abortCode } from '../../invocation/index.js';
import type { SchemaViolation, ToolDescriptor } from '../../tools/index.js';
import { LeaseKeeper } from '../../sandbox/index.js';
import type { ConfiningSandbox } from '../browser/index.js';
import { computerInputProblems } from './computer-actions.js';
import type { ComputerStep } from './computer-actions.js';
import {
  computerUseExecution,
  computerUseExecutionProblem,
  displayOf,
  screenOf,
} from './computer-use-execution.js';
import { Desktop } from './desktop.js';
import { ActionFailed, runAction, screenshot, sendsInput } from './run-action.js';
import type { ActionContext, ActionResult } from './run-action.js';

/** Time kept back from the call's timeout for the closing screenshot and the report. */
const CLOSE_MARGIN_MS = 1000;

/**
 * Runs `computer-use` descriptors (DESIGN §10): a virtual display (Xvfb) and the application the
 * descriptor names, in a sandbox of the call's lease (its limits, seccomp, the sandbox user, its
 * workspace, the network only through the running call's egress endpoint), driven with xdotool inside that sandbox. A call runs its actions in
 * order and answers each one's result and a screenshot taken after them (a PNG artifact). The
 * desktop lives as long as the lease: the calls of one attempt (`runId` + `attemptId`) see one
 * desktop, and `endLease` (the lease released or reaped) kills it. A call whose desktop dies or
 * times out after input was sent may have had an effect (uncertain for a class that can write).
 */
export class ComputerUseExecutor implements Executor {
  readonly lease: LeaseNeed = { kind: 'sandbox' };
  /** The desktops of live leases, one per lease and tool, kept between the lease's calls. */
  private readonly desktops: LeaseKeeper<Desktop> | null;

  /**
   * Without a sandbox (this machine cannot run one) descriptors validate but calls fail before
   * effect. `egress`: a directory of this gateway's for the desktops' egress relay sockets, which
   * the sandbox user can pass through (mode 0711; the gateway empties it at start), and the user
   * that connects (the sandbox user of a root gateway); without it desktops have no network.
   */
  constructor(
    private readonly sandbox?: ConfiningSandbox,
    private readonly egress?: { scratch: string; owner: { uid: number; gid: number } | null },
  ) {
    this.desktops = sandbox
      ? new LeaseKeeper<Desktop>({
          what: 'desktop',
          running: (d) => d.running,
          close: (d) => d.close(),
        })
      : null;
  }

  check(d: ToolDescriptor): string | null {
    return computerUseExecutionProblem(d);
  }

  inputCheck(d: ToolDescriptor): (input: unknown) => SchemaViolation[] {
    return (input) => computerInputProblems(d, input);
  }

  /** Kills the desktops of a lease that ended (released or reaped). */
  endLease(leaseId: string): Promise<void> {
    return this.desktops?.endLease(leaseId) ?? Promise.resolve();
  }

  /** Kills every desktop (the gateway is closing). Safe twice. */
  close(): Promise<void> {
    return this.desktops?.close() ?? Promise.resolve();
  }

  async execute(req: ExecutionRequest): Promise<ExecutionReport> {
    const { lease, signal, descriptor: d } = req;
    if (!this.sandbox || !this.desktops)
      return notRun('SANDBOX_UNAVAILABLE', 'this gateway has no sandbox; nothing ran');
    if (!lease)
      return notRun(
        'NO_LEASE',
        'a computer-use tool runs only in a sandbox lease, and none was granted',
      );
    const actions = (req.input as { actions: ComputerStep[] }).actions;
    const deadline = Date.now() + req.timeoutMs - CLOSE_MARGIN_MS;
    const left = (): number => Math.max(1, deadline - Date.now());
    const display = displayOf(d);
    const screen = screenOf(d);
    let desktop: Desktop;
    let fresh: boolean;
    try {
      if (signal.aborted)
        return notRun(abortCode(signal), 'the call was aborted before the desktop started');
      const sandbox = this.sandbox;
      const spec = {
        workspace: lease.workspace,
        readOnlyMounts: lease.readOnlyMounts,
        limits: lease.limits,
        screen,
        application: computerUseExecution(d).application,
        egress: this.egress ?? null,
      };
      const timeoutMs = left();
      ({ value: desktop, fresh } = await this.desktops.get(lease.id, `${d.id}@${d.version}`, (n) =>
        Desktop.start(sandbox, { ...spec, id: `${lease.id}.desktop-${n}` }, timeoutMs),
      ));
    } catch (err) {
      return notRun('DESKTOP_START', `the desktop did not start: ${gist(err)}`);
    }
    // An abort (timeout, revocation, shutdown) ends the desktop: its state is then unknown.
    const kill = (): void => void desktop.close();
    signal.addEventListener('abort', kill, { once: true });
    // The desktop's network is this call's egress endpoint while the call runs, and none after.
    desktop.useEgress(lease.egressSocket);
    // What it tried while no call ran goes on this call's record, before this call's own.
    for (const refused of desktop.takeRefused()) req.onEgress?.(refused);
    const context: ActionContext = {
      desktop,
      display,
      screen,
      timeoutMs: left,
      signal,
      ...(req.storeArtifact ? { storeArtifact: req.storeArtifact } : {}),
    };
    const results: ActionResult[] = [];
    try {
      for (const [index, step] of actions.entries()) {
        try {
          results.push(await runAction(step, context));
        } catch (err) {
          return await stopped(req, context, results, { index, step }, err, deadline);
        }
      }
      const last = results.at(-1);
      let shot: Record<string, unknown>;
      try {
        shot = last?.action === 'screenshot' ? withoutAction(last) : await screenshot(context);
      } catch (err) {
        return await stopped(req, context, results, null, err, deadline);
      }
      return {
        status: 'observed',
        output: { actions: results, screenshot: shot, ...state(desktop, context, fresh) },
      };
    } finally {
      desktop.useEgress(null);
      signal.removeEventListener('abort', kill);
    }
  }
}

/**
 * What the output says of the desktop: its size (and the real screen's, when screenshots are scaled
 * down from it), whether this call started it, its application.
 */
function state(desktop: Desktop, c: ActionContext, fresh: boolean): Record<string, unknown> {
  const scaled = c.screen.width !== c.display.width || c.screen.height !== c.display.height;
  return {
    display: c.display,
    ...(scaled ? { screen: c.screen } : {}),
    desktop: fresh ? 'started' : 'kept',
    ...(desktop.applicationRunning ? {} : { application: 'exited' }),
  };
}

/**
 * An action (or the closing screenshot, `at` null) that did not finish: why, with the results so
 * far and, where the desktop still runs, a screenshot. An effect may have started once input was
 * sent.
 */
async function stopped(
  req: ExecutionRequest,
  c: ActionContext,
  results: ActionResult[],
  at: { index: number; step: ComputerStep } | null,
  err: unknown,
  deadline: number,
): Promise<ExecutionReport> {
  const limit = c.desktop.usage().limitHit;
  const outOfTime = !req.signal.aborted && Date.now() >= deadline - 50;
  const code = req.signal.aborted
    ? abortCode(req.signal)
    : outOfTime
      ? 'TIMEOUT'
      : limit !== null
        ? `LIMIT_${limit.toUpperCase()}`
        : err instanceof ActionFailed
          ? err.code
          : 'DESKTOP_FAILED';
  const why = req.signal.aborted
    ? `the call was aborted (${code})`
    : outOfTime
      ? `the call timed out after ${req.timeoutMs} ms`
      : limit !== null
        ? `the desktop hit the lease's ${limit} limit (${gist(err)})`
        : gist(err);
  // A desktop that timed out or died is gone: the next call of the attempt starts a new one.
  if (!(err instanceof ActionFailed)) await c.desktop.close();
  const input =
    results.some((r) => sendsInput(r as ComputerStep)) || (at !== null && sendsInput(at.step));
  let shot: Record<string, unknown> | null = null;
  if (c.desktop.running && !req.signal.aborted && !outOfTime)
    shot = await screenshot(c).catch(() => null);
  const where = at === null ? 'the closing screenshot' : `action ${at.index} (${at.step.action})`;
  return {
    status: 'stopped',
    code,
    message: `${where} did not finish: ${why}`,
    output: {
      actions: results,
      ...(shot ? { screenshot: shot } : {}),
      failed: { ...(at ? { index: at.index, action: at.step.action } : {}), code, message: why },
      desktop: c.desktop.running ? 'kept' : 'ended',
    },
    effectMayHaveStarted: input,
    ...(input
      ? { uncertainNote: 'after input reached the desktop; an effect may have happened' }
      : {}),
  };
}

function withoutAction(r: ActionResult): Record<string, unknown> {
  const { action: _action, ...rest } = r;
  return rest;
}

/** A call that ended before any input reached a desktop: nothing took effect. */
function notRun(code: string, message: string): ExecutionReport {
  return { status: 'stopped', code, message, effectMayHaveStarted: false };
}

/** The first line of an error, bounded. */
function gist(err: unknown): string {
  const text = err instanceof Error ? err.message : String(err);
  return (text.split('\n')[0] ?? '').slice(0, 500);
}
