import type {
  ExecutionReport,
  ExecutionRequest,
  Executor,
  LeaseNeed,
} from '../../invocation/index.js';
import { abortCode } from '../../invocation/index.js';
import type { ToolDescriptor } from '../../tools/index.js';

/** What a native tool is given besides its input. */
export interface NativeContext {
  invocationId: string;
  tenant: string;
  project: string;
  environment: string;
  /** Aborted on timeout, revocation or shutdown: stop, and say whether anything took effect. */
  signal: AbortSignal;
}

/** A tool implemented as a TypeScript function. */
export type NativeHandler = (input: unknown, ctx: NativeContext) => Promise<unknown>;

/**
 * Thrown by a native handler that knows nothing took effect; any other error from a handler of
 * a class that can change something makes the call `uncertain`.
 */
export class BeforeEffectError extends Error {
  constructor(
    message: string,
    readonly code = 'TOOL_FAILED',
  ) {
    super(message);
    this.name = 'BeforeEffectError';
  }
}

/** Runs tools of kind `native`: functions registered by name (`execution.handler`). */
export class NativeExecutor implements Executor {
  private readonly handlers = new Map<string, NativeHandler>();
  readonly lease: LeaseNeed = { kind: 'none', why: 'native tools run in the gateway process' };

  /** Registers a handler under a name. @throws Error when the name is taken. */
  register(name: string, handler: NativeHandler): this {
    if (this.handlers.has(name)) throw new Error(`native handler ${name} is already registered`);
    this.handlers.set(name, handler);
    return this;
  }

  /** Null when the descriptor names a registered handler. */
  check(descriptor: ToolDescriptor): string | null {
    const name = descriptor.execution.handler;
    if (typeof name !== 'string')
      return 'a native tool needs execution.handler, the name of a registered handler';
    if (!this.handlers.has(name))
      return `no native handler named ${JSON.stringify(name)} is registered in this gateway (registered: ${[...this.handlers.keys()].join(', ') || 'none'})`;
    return null;
  }

  /**
   * Runs the handler; a timeout, abort or error once it started may have had an effect, unless
   * the handler threw {@link BeforeEffectError}.
   */
  async execute(req: ExecutionRequest): Promise<ExecutionReport> {
    const handler = this.handlers.get(req.descriptor.execution.handler as string);
    if (!handler) return beforeEffect('NO_HANDLER', this.check(req.descriptor) ?? 'no handler');
    if (req.signal.aborted) return beforeEffect('ABORTED', 'aborted before the tool started');
    try {
      const output = await raceAbort(
        handler(req.input, {
          invocationId: req.invocationId,
          tenant: req.tenant,
          project: req.project,
          environment: req.environment.name,
          signal: req.signal,
        }),
        req.signal,
      );
      return { status: 'observed', output };
    } catch (err) {
      if (err instanceof BeforeEffectError) return beforeEffect(err.code, err.message);
      const aborted = req.signal.aborted;
      const code = aborted ? abortCode(req.signal) : 'TOOL_ERROR';
      const message = aborted
        ? code === 'TIMEOUT'
          ? `timed out after ${req.timeoutMs} ms while running`
          : `aborted while running: ${(req.signal.reason as Error | undefined)?.message ?? 'aborted'}`
        : `the tool threw: ${(err as Error).message ?? String(err)}`;
      return { status: 'stopped', code, message, effectMayHaveStarted: true };
    }
  }
}

function beforeEffect(code: string, message: string): ExecutionReport {
  return { status: 'stopped', code, message, effectMayHaveStarted: false };
}

function raceAbort<T>(work: Promise<T>, signal: AbortSignal): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const onAbort = () =>
      reject(signal.reason instanceof Error ? signal.reason : new Error('aborted'));
    signal.addEventListener('abort', onAbort, { once: true });
    work.then(
      (v) => {
        signal.removeEventListener('abort', onAbort);
        resolve(v);
      },
      (e: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(e instanceof Error ? e : new Error(String(e)));
      },
    );
  });
}
