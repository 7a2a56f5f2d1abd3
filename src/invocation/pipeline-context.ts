import type { Environment, SideEffectClass } from '../core/index.js';
import type { Principal } from '../tenancy/index.js';
import type { RegisteredTool, StoredAgentRelease } from '../tools/index.js';
import type { ExecutionResult } from './executor.js';
import type { InvocationRecord } from './invocation-record.js';

/** What the stages of one pass of the pipeline share. Stages fill it in as they decide. */
export interface PipelineContext {
  record: InvocationRecord;
  principal: Principal;
  /** Aborted on timeout, revocation or shutdown. */
  signal: AbortSignal;
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
  /** Set by the execute stage. */
  execution?: ExecutionResult;
  /** The output before sanitizing, for its digest. */
  fullOutput?: unknown;
}
