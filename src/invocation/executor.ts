import { AbortReason, FailureCode } from '../core/index.js';
import type { Environment, SideEffectClass } from '../core/index.js';
import type { EgressDecision } from '../egress/index.js';
import type { BrokeredValue, Redactor } from '../secrets/index.js';
import type { ToolDescriptor } from '../tools/index.js';
import type { OutputCapture } from './output-capture.js';

/** What an executor that runs code in a sandbox gets of the call's lease. */
export interface ExecutionLease {
  id: string;
  /** Host path of the writable workspace. */
  workspace: string;
  readOnlyMounts: { host: string; sandbox: string }[];
  limits: { memoryBytes: number; cpus: number; pids: number; timeoutMs: number };
  /** Host path of the egress proxy's socket for this lease, or null for no network. */
  egressSocket: string | null;
  /** Credentials issued for this call, as the descriptor asked them injected. */
  env: Record<string, string>;
  files: { path: string; content: string; mode: number }[];
}

/** What an executor is given to run one call. */
export interface ExecutionRequest {
  invocationId: string;
  tenant: string;
  project: string;
  environment: Environment;
  agent: { id: string; version: string };
  descriptor: ToolDescriptor;
  input: unknown;
  /** The call's request hash (the same on every attempt of one request). */
  requestHash: string;
  /** The caller's idempotency key (the same on every attempt of one request). */
  idempotencyKey: string;
  effectiveClass: SideEffectClass;
  /** Aborted on timeout, revocation or shutdown. */
  signal: AbortSignal;
  timeoutMs: number;
  /** The call's lease, for kinds that run in a sandbox. */
  lease?: ExecutionLease;
  /**
   * Brokered credentials to send as HTTP headers (values: never log them); `host` absent means
   * every request of the call. For kinds that send HTTP from the gateway.
   */
  headers?: readonly { host?: string; name: string; value: string }[];
  /** Records an egress decision the executor made itself (HTTP from the gateway). */
  onEgress?: (decision: EgressDecision) => void;
  /** A capture for one output stream: redacted, bounded in memory, spooled whole to an artifact. */
  capture: () => OutputCapture;
}

/**
 * An executor's account of a call. `failed` only when nothing took effect; `uncertain` when an
 * effect may have happened (connection lost, killed, timed out after it started).
 */
export type ExecutionResult = (
  | { status: 'observed'; output: unknown }
  | { status: 'failed'; code: string; message: string; output?: unknown }
  | { status: 'uncertain'; code: string; message: string; output?: unknown }
) & {
  /**
   * The output as the tool produced it, before redaction, where the executor redacted while
   * capturing (shell streams): only its digest is kept (`sha256Full`). Never stored.
   */
  full?: unknown;
  /**
   * Secret values the executor's connection holds beyond the call's own credentials (an MCP
   * upstream's connection credentials): the execute stage adds them to the call's redactor and
   * drops them from the result. Never stored.
   */
  secrets?: BrokeredValue[];
  /** A redactor of exactly `secrets`, compiled once by their connection, to use when the call has no own credentials. */
  secretsRedactor?: Redactor;
};

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

/**
 * Why a call's signal was aborted, as a failure code: TIMEOUT (the execute stage's timer), the
 * {@link AbortReason}'s code (REVOKED, SHUTDOWN), or ABORTED.
 */
export function abortCode(signal: AbortSignal): FailureCode {
  const reason = signal.reason as unknown;
  if (reason instanceof DOMException && reason.name === 'TimeoutError') return FailureCode.TIMEOUT;
  return reason instanceof AbortReason ? reason.code : FailureCode.ABORTED;
}
