import type {
  ExecutionReport,
  ExecutionRequest,
  Executor,
  LeaseNeed,
} from '../../invocation/index.js';
import { abortCode, cutNote } from '../../invocation/index.js';
import { isGatehouseError } from '../../core/index.js';
import type { Sandbox, SandboxResult } from '../../sandbox/index.js';
import type { ToolDescriptor } from '../../tools/index.js';
import { fillTemplate, templateProblem } from './argv-template.js';

/** The execution config of a `shell` descriptor. */
export interface ShellExecution {
  /** Program and arguments; `{/pointer}` in an element is filled from the input. */
  argv: string[];
  /** Template of standard input, if any. */
  stdin?: string;
  /** Fixed environment variables (credentials come from the broker). */
  env?: Record<string, string>;
  /** Exit codes that mean "failed, and nothing took effect". 0 is success. */
  failureExitCodes?: number[];
}

function config(d: ToolDescriptor): ShellExecution {
  return d.execution as unknown as ShellExecution;
}

/**
 * Runs `shell` descriptors in the call's sandbox lease. Exit 0 is observed; a declared failure
 * code is failed (before effect); a call of a class that can change things that is killed
 * (timeout, limits, abort) or exits with an undeclared code after it started is uncertain.
 */
export class ShellExecutor implements Executor {
  /** Without a sandbox (this machine cannot run one) descriptors validate but calls fail before effect. */
  constructor(private readonly sandbox?: Sandbox) {}

  /** On demand: a call served by a warm sandbox uses that sandbox's own workspace. */
  readonly lease: LeaseNeed = { kind: 'sandbox', workspace: 'on-demand' };

  check(d: ToolDescriptor): string | null {
    const c = config(d);
    if (
      !Array.isArray(c.argv) ||
      c.argv.length === 0 ||
      !c.argv.every((a) => typeof a === 'string')
    ) {
      return 'a shell tool needs execution.argv, a non-empty list of strings';
    }
    if (c.stdin !== undefined && typeof c.stdin !== 'string')
      return 'execution.stdin must be a string template';
    if (
      c.env !== undefined &&
      (typeof c.env !== 'object' || !Object.values(c.env).every((v) => typeof v === 'string'))
    ) {
      return 'execution.env must map names to strings';
    }
    if (
      c.failureExitCodes !== undefined &&
      !(
        Array.isArray(c.failureExitCodes) &&
        c.failureExitCodes.every((n) => Number.isInteger(n) && n > 0 && n < 256)
      )
    ) {
      return 'execution.failureExitCodes must be integers from 1 to 255';
    }
    for (const [where, template] of [
      ...c.argv.map((a, i) => [`execution.argv[${i}]`, a] as const),
      ...(c.stdin === undefined ? [] : [['execution.stdin', c.stdin] as const]),
    ]) {
      const problem = templateProblem(template);
      if (problem !== null) return `${where}: ${problem}`;
    }
    return null;
  }

  async execute(req: ExecutionRequest): Promise<ExecutionReport> {
    const lease = req.lease;
    const sandbox = this.sandbox;
    if (!sandbox) return notRun('SANDBOX_UNAVAILABLE', 'this gateway has no sandbox; nothing ran');
    if (!lease)
      return notRun('NO_LEASE', 'a shell tool runs only in a sandbox lease, and none was granted');
    const c = config(req.descriptor);
    let argv: string[];
    let stdin: string | undefined;
    try {
      argv = c.argv.map((a) => fillTemplate(a, req.input));
      stdin = c.stdin === undefined ? undefined : fillTemplate(c.stdin, req.input);
    } catch (err) {
      return notRun('TEMPLATE', (err as Error).message);
    }
    const stdout = req.capture();
    const stderr = req.capture();
    let result: SandboxResult;
    try {
      result = await sandbox.run({
        id: lease.id,
        argv,
        env: {
          PATH: '/usr/local/bin:/usr/bin:/bin',
          HOME: '/workspace',
          LANG: 'C.UTF-8',
          ...c.env,
          ...lease.env,
        },
        workspace: lease.workspace,
        ...(lease.freshWorkspace === true ? { freshWorkspace: true } : {}),
        ...(lease.prepareWorkspace === undefined
          ? {}
          : { prepareWorkspace: lease.prepareWorkspace }),
        readOnlyMounts: lease.readOnlyMounts,
        files: lease.files,
        ...(stdin !== undefined ? { stdin } : {}),
        limits: lease.limits,
        egressSocket: lease.egressSocket,
        onStdout: (chunk: Buffer) => stdout.write(chunk),
        onStderr: (chunk: Buffer) => stderr.write(chunk),
        signal: req.signal,
      });
    } catch (err) {
      // The sandbox refused the run, or could not make it (its workspace, its cgroup): it says
      // nothing ran when it throws, so the call failed before any effect.
      if (!isGatehouseError(err)) throw err;
      return notRun(err.code, `the sandbox could not run the tool: ${err.message}`);
    }
    const out = await stdout.end();
    const err = await stderr.end();
    const output = {
      exitCode: result.exitCode,
      stdout: out.text,
      stderr: err.text,
      ...(out.truncated ? { stdoutTruncated: cutNote(out) } : {}),
      ...(err.truncated ? { stderrTruncated: cutNote(err) } : {}),
      usage: result.usage,
      durationMs: result.durationMs,
    };
    // The output as the tool wrote it, for the digest of the full output (never stored).
    const full = { ...output, stdout: out.raw, stderr: err.raw };
    // A program that is missing or not executable lands here too, with or without egress (the
    // sandbox checks before it execs it): name it, whatever the sandbox's own words were.
    if (!result.started)
      return notRun(
        'SANDBOX_SETUP',
        `the sandbox could not start the tool's program ${JSON.stringify(argv[0])}, so nothing ran: ${err.text.trim().slice(0, 500) || 'no message'}`,
      );
    if (result.killed !== null) {
      // The execute stage's timer aborts the call at the same timeout: that abort is a timeout.
      const killed =
        result.killed === 'abort' && abortCode(req.signal) === 'TIMEOUT'
          ? 'timeout'
          : result.killed;
      const code =
        killed === 'timeout'
          ? 'TIMEOUT'
          : killed === 'abort'
            ? abortCode(req.signal)
            : `LIMIT_${killed.toUpperCase()}`;
      const message = `the tool was killed (${killed}${killed === 'timeout' ? ` after ${lease.limits.timeoutMs} ms` : ''}) while running`;
      return { status: 'stopped', code, message, output, full, effectMayHaveStarted: true };
    }
    if (result.exitCode === 0) return { status: 'observed', output, full };
    const declared = (c.failureExitCodes ?? []).includes(result.exitCode ?? -1);
    const message = `the tool exited with code ${result.exitCode ?? result.signal}${declared ? ', which its descriptor declares a failure before any effect' : ''}`;
    return {
      status: 'stopped',
      code: 'EXIT_CODE',
      message,
      output,
      full,
      effectMayHaveStarted: !declared,
      uncertainNote: 'the descriptor does not declare it, so an effect may have happened',
    };
  }
}

/** A call that ended before the tool ran: nothing took effect. */
function notRun(code: string, message: string): ExecutionReport {
  return { status: 'stopped', code, message, effectMayHaveStarted: false };
}
