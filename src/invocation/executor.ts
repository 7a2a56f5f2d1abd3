import type { Environment, SideEffectClass } from '../core/index.js';
import type { ToolDescriptor } from '../tools/index.js';

/** What an executor is given to run one call. */
export interface ExecutionRequest {
  invocationId: string;
  tenant: string;
  project: string;
  environment: Environment;
  agent: { id: string; version: string };
  descriptor: ToolDescriptor;
  input: unknown;
  effectiveClass: SideEffectClass;
  /** Aborted on timeout, revocation or shutdown. */
  signal: AbortSignal;
  timeoutMs: number;
}

/**
 * An executor's account of a call. `failed` only when nothing took effect; `uncertain` when an
 * effect may have happened (connection lost, killed, timed out after it started).
 */
export type ExecutionResult =
  | { status: 'observed'; output: unknown }
  | { status: 'failed'; code: string; message: string }
  | { status: 'uncertain'; code: string; message: string };

/** Runs tools of one kind. */
export interface Executor {
  /**
   * Runs one call. Must not throw for a tool's own failure: report it as `failed` or `uncertain`.
   * Throws only on a bug.
   */
  execute(request: ExecutionRequest): Promise<ExecutionResult>;
  /** Null when this executor can run the descriptor, otherwise why not. */
  check(descriptor: ToolDescriptor): string | null;
}
