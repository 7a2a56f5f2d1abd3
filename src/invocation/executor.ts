import type { CallerChannel, CallerInteraction } from './invocation-telemetry.js';
import { AbortReason, FailureCode } from '../core/index.js';
import type { Environment, OriginBoundHeader, SideEffectClass } from '../core/index.js';
import type { EgressDecision } from '../egress/index.js';
import type { BrokeredValue, Redactor } from '../secrets/index.js';
import type { SchemaViolation, ToolDescriptor } from '../tools/index.js';
import type { OutputCapture } from './output-capture.js';

/** What an executor that runs code in a sandbox gets of the call's lease. */
export interface ExecutionLease {
  id: string;
  /**
   * True for an attempt's lease (`runId` + `attemptId`), which outlives this call and is shared by
   * the attempt's calls; false for one call's own lease, which ends with it.
   */
  attempt: boolean;
  /** Host path of the writable workspace. */
  workspace: string;
  /**
   * True when the workspace is this call's alone, made empty for it and removed after it (not an
   * attempt's, not a worktree): a warm sandbox's own empty workspace may stand in for it.
   */
  freshWorkspace?: boolean;
  /**
   * Present when the workspace is made on demand (the executor's lease need said `on-demand`):
   * `workspace` does not exist until this resolves; the lease removes it at its end only if it
   * was asked for. Safe to repeat (one workspace).
   * @throws GatehouseError when it cannot be made (UNAVAILABLE: a bounded one cannot be
   *   mounted); nothing ran then.
   */
  prepareWorkspace?: () => Promise<void>;
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
   * Brokered credentials to send as HTTP headers (values: never log them), each only to the exact
   * origin it is bound to (`headersForOrigin`); `origin` absent means every request of the call.
   * For kinds that send HTTP from the gateway.
   */
  headers?: readonly OriginBoundHeader[];
  /** Records an egress decision the executor made itself (HTTP from the gateway). */
  onEgress?: (decision: EgressDecision) => void;
  /** A capture for one output stream: redacted, bounded in memory, spooled whole to an artifact. */
  capture: () => OutputCapture;
  /**
   * Stores bytes the tool produced beside its output (a browser screenshot) as a content-addressed
   * artifact and returns their SHA-256 (hex). Never give it a brokered secret: artifacts are not
   * redacted. Absent where the caller keeps no artifacts.
   */
  storeArtifact?: (bytes: Uint8Array) => Promise<string>;
  /**
   * Adds secret values the executor's connection holds beyond the call's own credentials (an MCP
   * upstream's connection credentials) to the call's redactor, so sanitizing removes them from
   * output and errors; `redactor` is one compiled of exactly `values`, used when the call has no
   * own credentials. Never stored.
   */
  redactAlso: (values: BrokeredValue[], redactor?: Redactor) => void;
  /**
   * The call's redactor over a JSON value (its credentials, those `redactAlso` added, known secret
   * shapes), for an executor that cuts output itself: cut after redaction, or a secret cut in half
   * at the bound is no longer found by the sanitize stage. What it removes joins the record's.
   */
  redact: <T>(value: T) => T;
  /** The caller's live channel, when the caller waits on one (see {@link CallerChannel}). */
  caller?: CallerChannel;
  /** Records a request the tool sent its caller (through `caller.ask`, or refused) in the trace. */
  onInteraction?: (interaction: CallerInteraction) => void;
}

/**
 * The lease a call of an executor's kind needs: a sandbox lease per call, or none (and why not,
 * said in the trace).
 */
export type LeaseNeed =
  | {
      kind: 'sandbox';
      /**
       * `on-demand`: a call's own fresh workspace is made only when the executor asks for it
       * ({@link ExecutionLease.prepareWorkspace}), so a call served by a warm sandbox (which has a
       * workspace of its own) makes and removes none. Default `eager`: made with the lease.
       */
      workspace?: 'eager' | 'on-demand';
    }
  | { kind: 'none'; why: string };

/**
 * What came out of a call beside its output: the output as the tool produced it, before
 * redaction, where the executor redacted while capturing (shell streams). Only its digest is kept
 * (`sha256Full`). Never stored.
 */
export interface FullOutput {
  full?: unknown;
}

/**
 * The outcome of a call, as {@link judgeExecution} decides it from the executor's report: `failed`
 * only when nothing took effect; `uncertain` when an effect may have happened (connection lost,
 * killed, timed out after it started).
 */
export type ExecutionResult = (
  | { status: 'observed'; output: unknown }
  | { status: 'failed'; code: string; message: string; output?: unknown }
  | { status: 'uncertain'; code: string; message: string; output?: unknown }
) &
  FullOutput;

/**
 * What an executor observed of a call: facts, not a verdict. `stopped` is a call that ended
 * without the tool's result (refused, not started, killed, timed out, connection lost).
 */
export type ExecutionReport = (
  | { status: 'observed'; output: unknown }
  | {
      status: 'stopped';
      code: string;
      message: string;
      output?: unknown;
      /** Whether the tool may have started acting: the request was sent, or the process ran. */
      effectMayHaveStarted: boolean;
      /** Why an effect may have happened, said after the message when the call is uncertain. */
      uncertainNote?: string;
    }
) &
  FullOutput;

/** Runs tools of one kind. */
export interface Executor {
  /** The lease its calls need; the sandbox stage reads it. */
  readonly lease: LeaseNeed;
  /**
   * Runs one call and reports what it observed. Must not throw for a tool's own failure: report
   * it as `stopped`, saying whether the tool may have started acting. Throws only on a bug.
   */
  execute(request: ExecutionRequest): Promise<ExecutionReport>;
  /** Null when this executor can run the descriptor, otherwise why not. */
  check(descriptor: ToolDescriptor): string | null;
  /**
   * What this executor checks of a call's input beyond the descriptor's input schema, for a
   * descriptor `check` accepted; absent or null when nothing. Problems deny the call at validation.
   */
  inputCheck?(descriptor: ToolDescriptor): ((input: unknown) => SchemaViolation[]) | null;
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
