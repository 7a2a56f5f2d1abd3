import type { AuditRecordDraft, Environment, SideEffectClass } from '../core/index.js';
import type { Approval } from '../approvals/index.js';
import type { IssuedCredentials, Redactor, Removal } from '../secrets/index.js';
import type { HeldLease } from './sandbox-leases.js';
import type { OutputCapture } from './output-capture.js';
import type { Principal } from '../tenancy/index.js';
import type { RegisteredTool, StoredAgentRelease } from '../tools/index.js';
import type { ExecutionResult } from './executor.js';
import type { InvocationRecord } from './invocation-record.js';
import type { InvocationTelemetry, InvocationTrace } from './invocation-telemetry.js';
import type { EgressEntry, SanitizedExecution } from './sanitized-execution.js';

/** What the stages of one pass of the pipeline share. Stages fill it in as they decide. */
export interface PipelineContext {
  record: InvocationRecord;
  principal: Principal;
  /** Aborts the call: on timeout, revocation or shutdown. Its signal reaches the executor. */
  controller: AbortController;
  /** Resolved before the stages run; absent when the request names an unknown one. */
  tool?: RegisteredTool;
  release?: StoredAgentRelease;
  environment?: Environment;
  /** Set before the policy stage: policy sees the effective class (DESIGN §3). */
  classification?: {
    effectiveClass: SideEffectClass;
    declaredClass: SideEffectClass;
    raisedBy: { rule?: string; reason: string }[];
    frozenDenial: string | null;
  };
  /** Set by the approval stage when the call must wait: the approval request to create. */
  pendingApproval?: Approval;
  /** Set when the call resumes with an approved approval, which the next save consumes. */
  approved?: Approval;
  /** Set by the credentials stage: the issued credentials (values: never store this). */
  credentials?: IssuedCredentials;
  /**
   * Audit records of the call's parts (its credential leases issued) that its next save writes
   * in the same commit, before its own record; a call with any is recorded before it executes.
   */
  pendingAudit: AuditRecordDraft[];
  /** Removes this call's credential values (and known secret patterns) from what is kept. */
  redactor: Redactor;
  /** Set by the sandbox stage. */
  held?: HeldLease;
  /** Records the call `queued` while it waits for capacity. */
  markQueued: () => Promise<void>;
  /** The output captures the executor made (their redactions join the record's). */
  captures: OutputCapture[];
  /** What the executor's own redaction removed (`ExecutionRequest.redact`); joins the record's. */
  executorRemovals: Removal[];
  /** How many trace entries are already stored (0 for a call never recorded). */
  savedTrace: number;
  /** What to undo when the call ends, however it ends (revoke, release, remove). */
  cleanup: (() => Promise<void>)[];
  /**
   * Set by the execute stage: the outcome judged from the executor's report, with its output and
   * full output as they came (may hold secrets; never stored).
   */
  execution?: ExecutionResult;
  /** The caller's span and log, from the request that caused this pass. */
  telemetry?: InvocationTelemetry;
  /** Set when the pass starts: the invocation span and the call's log. */
  tracing?: InvocationTrace;
  /**
   * The egress proxy's log of the call as it came (may hold secrets; never stored): the record
   * gets its sanitized copy.
   */
  egress: EgressEntry[];
  /** Set by the sanitize stage: what of the execution may be kept. */
  sanitized?: SanitizedExecution;
}

/** The context once validation found the tool, the agent's release and the environment. */
export type ValidatedContext = PipelineContext &
  Required<Pick<PipelineContext, 'tool' | 'release' | 'environment'>>;

/** A validated context whose effective class is known: what the policy stage and later read. */
export type ClassifiedContext = ValidatedContext &
  Required<Pick<PipelineContext, 'classification'>>;

/**
 * `ctx` as validated. Stages after validation run only on a validated call, so a missing part is
 * a bug in the pipeline, reported as such.
 * @throws Error naming what validation left unset.
 */
export function validated(ctx: PipelineContext): ValidatedContext {
  const missing = (['tool', 'release', 'environment'] as const).filter((k) => !ctx[k]);
  if (missing.length > 0)
    throw new Error(`a stage after validation ran without ${missing.join(', ')} (a pipeline bug)`);
  return ctx as ValidatedContext;
}
