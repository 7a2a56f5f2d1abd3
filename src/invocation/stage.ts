import type { DenialCode, ErrorCode, FailureCode } from '../core/index.js';

/** The pipeline's stages, in order (DESIGN §3). */
export const StageName = {
  validation: 'validation',
  permission: 'permission',
  policy: 'policy',
  classification: 'classification',
  approval: 'approval',
  credentials: 'credentials',
  sandbox: 'sandbox',
  execute: 'execute',
  sanitize: 'sanitize',
  audit: 'audit',
  /** Not a pipeline stage: an operator's resolution of an Uncertain effect, kept in the trace. */
  resolution: 'resolution',
} as const;
export type StageName = (typeof StageName)[keyof typeof StageName];

/** What a stage decided, as recorded in the trace. */
export type StageDecision =
  | 'pass'
  | 'not-required'
  | 'deny'
  | 'suspend'
  | 'fail'
  | 'observed'
  | 'failed'
  | 'uncertain'
  | 'recorded'
  | 'confirmed'
  | 'denied';

/** One stage's decision on the invocation. */
export interface TraceEntry {
  stage: StageName;
  decision: StageDecision;
  /** A sentence a person can act on. */
  reason: string;
  /** ISO 8601 time of the decision. */
  at: string;
  details?: Record<string, unknown>;
}

/**
 * A stage's answer. `continue` goes on to the next stage; `deny` ends the call `denied`;
 * `suspend` ends this pass `awaiting_approval`; `fail` ends it `failed` before any effect.
 */
export type StageResult =
  | {
      outcome: 'continue';
      decision?: 'pass' | 'not-required';
      reason: string;
      details?: Record<string, unknown>;
    }
  | { outcome: 'deny'; code: DenialCode; reason: string; details?: Record<string, unknown> }
  | { outcome: 'suspend'; reason: string; details?: Record<string, unknown> }
  | {
      outcome: 'fail';
      /** A failure code, or the code of the request error that stopped the stage. */
      code: FailureCode | ErrorCode;
      reason: string;
      details?: Record<string, unknown>;
    };
