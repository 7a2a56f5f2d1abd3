/**
 * The codes an invocation ends with when it does not succeed, and what each means. A denial is
 * governance saying no (the call never ran); a failure is a call that could not run or whose tool
 * failed (or, for some, may have had an effect: then the call is `uncertain`). The transport
 * edges key their status tables by these codes, as tRPC keys its status table by its error codes.
 */

/** Why a stage denied a call (the invocation ends `denied`). */
export const DenialCode = {
  UNKNOWN_TOOL: 'UNKNOWN_TOOL',
  UNKNOWN_ENVIRONMENT: 'UNKNOWN_ENVIRONMENT',
  INVALID_INPUT: 'INVALID_INPUT',
  PERMISSION_DENIED: 'PERMISSION_DENIED',
  TOOL_REVOKED: 'TOOL_REVOKED',
  POLICY_DENIED: 'POLICY_DENIED',
  ENVIRONMENT_FROZEN: 'ENVIRONMENT_FROZEN',
  APPROVAL_REJECTED: 'APPROVAL_REJECTED',
  APPROVAL_EXPIRED: 'APPROVAL_EXPIRED',
  APPROVAL_INVALIDATED: 'APPROVAL_INVALIDATED',
} as const;
export type DenialCode = (typeof DenialCode)[keyof typeof DenialCode];

/** What a denial code means. */
export interface DenialMeaning {
  /** The request itself is invalid (answered 422); other denials are refusals (403). */
  invalidRequest: boolean;
  /** The stage that decides it. */
  stage: 'validation' | 'permission' | 'policy' | 'classification' | 'approval';
}

/** Every denial code's meaning. No denial is retryable: the same call is denied again. */
export const DENIALS: { readonly [C in DenialCode]: DenialMeaning } = {
  UNKNOWN_TOOL: { invalidRequest: true, stage: 'validation' },
  UNKNOWN_ENVIRONMENT: { invalidRequest: true, stage: 'validation' },
  INVALID_INPUT: { invalidRequest: true, stage: 'validation' },
  PERMISSION_DENIED: { invalidRequest: false, stage: 'permission' },
  TOOL_REVOKED: { invalidRequest: false, stage: 'permission' },
  POLICY_DENIED: { invalidRequest: false, stage: 'policy' },
  ENVIRONMENT_FROZEN: { invalidRequest: false, stage: 'classification' },
  APPROVAL_REJECTED: { invalidRequest: false, stage: 'approval' },
  APPROVAL_EXPIRED: { invalidRequest: false, stage: 'approval' },
  APPROVAL_INVALIDATED: { invalidRequest: false, stage: 'approval' },
};

/** Why a call failed (`failed`), or why its effect is in doubt (`uncertain`). */
export const FailureCode = {
  // Decided by the gateway before anything ran.
  CREDENTIAL_UNAVAILABLE: 'CREDENTIAL_UNAVAILABLE',
  CREDENTIAL_SCOPE_DENIED: 'CREDENTIAL_SCOPE_DENIED',
  CREDENTIAL_LEASE_ENDED: 'CREDENTIAL_LEASE_ENDED',
  INVALID_DESCRIPTOR: 'INVALID_DESCRIPTOR',
  SANDBOX_UNAVAILABLE: 'SANDBOX_UNAVAILABLE',
  CAPACITY_EXHAUSTED: 'CAPACITY_EXHAUSTED',
  QUOTA_EXCEEDED: 'QUOTA_EXCEEDED',
  ATTEMPT_IDS_IN_USE: 'ATTEMPT_IDS_IN_USE',
  QUEUE_INTERRUPTED: 'QUEUE_INTERRUPTED',
  NO_EXECUTOR: 'NO_EXECUTOR',
  NO_LEASE: 'NO_LEASE',
  // Recovery and resolution.
  GATEWAY_RESTARTED: 'GATEWAY_RESTARTED',
  /** The gateway node running the call stopped heartbeating; another node took it over. */
  NODE_LOST: 'NODE_LOST',
  OUTCOME_NOT_RECORDED: 'OUTCOME_NOT_RECORDED',
  EFFECT_DENIED: 'EFFECT_DENIED',
  // Reported by executors.
  SANDBOX_SETUP: 'SANDBOX_SETUP',
  TEMPLATE: 'TEMPLATE',
  TIMEOUT: 'TIMEOUT',
  EXIT_CODE: 'EXIT_CODE',
  LIMIT_MEMORY: 'LIMIT_MEMORY',
  LIMIT_PIDS: 'LIMIT_PIDS',
  REVOKED: 'REVOKED',
  SHUTDOWN: 'SHUTDOWN',
  ABORTED: 'ABORTED',
  NO_HANDLER: 'NO_HANDLER',
  TOOL_ERROR: 'TOOL_ERROR',
  TOOL_FAILED: 'TOOL_FAILED',
  INVALID_INPUT: 'INVALID_INPUT',
  NOT_CONNECTED: 'NOT_CONNECTED',
  CONNECTION_LOST: 'CONNECTION_LOST',
  UPSTREAM_ERROR: 'UPSTREAM_ERROR',
  UPSTREAM_REFUSED: 'UPSTREAM_REFUSED',
  UPSTREAM_INVALID_ANSWER: 'UPSTREAM_INVALID_ANSWER',
  /** The upstream sent a message over the configured bound of one message; its connection was closed. */
  UPSTREAM_MESSAGE_TOO_LARGE: 'UPSTREAM_MESSAGE_TOO_LARGE',
  SERVER_UNAVAILABLE: 'SERVER_UNAVAILABLE',
  SERVER_NOT_FOUND: 'SERVER_NOT_FOUND',
  SERVER_DEGRADED: 'SERVER_DEGRADED',
  SERVER_NOT_ACTIVE: 'SERVER_NOT_ACTIVE',
  TOOL_NOT_BOUND: 'TOOL_NOT_BOUND',
  TOOL_UNBOUND: 'TOOL_UNBOUND',
  TOOL_GONE: 'TOOL_GONE',
  BINDING_MISMATCH: 'BINDING_MISMATCH',
} as const;
export type FailureCode = (typeof FailureCode)[keyof typeof FailureCode];

/**
 * The failure codes after which the same call (same idempotency key) runs again instead of
 * answering the stored outcome: nothing ran, and the cause passes (capacity, a stop while queued).
 * Every other failure is final.
 */
export const RETRYABLE_FAILURES: ReadonlySet<FailureCode> = new Set<FailureCode>([
  FailureCode.CAPACITY_EXHAUSTED,
  FailureCode.QUOTA_EXCEEDED,
  FailureCode.ATTEMPT_IDS_IN_USE,
  FailureCode.QUEUE_INTERRUPTED,
]);

/** True when `code` is a denial code. */
export function isDenialCode(code: string): code is DenialCode {
  return Object.hasOwn(DENIALS, code);
}

/** True when a call that failed with `code` runs again on a repeat of the same request. */
export function isRetryableFailure(code: string | undefined): boolean {
  return code !== undefined && RETRYABLE_FAILURES.has(code as FailureCode);
}

/**
 * Why a call's controller was aborted: revoked credentials or tool (`REVOKED`), or the gateway
 * shutting down (`SHUTDOWN`). The execute stage's timer aborts with a `TimeoutError` instead.
 */
export class AbortReason extends Error {
  constructor(
    readonly code: 'REVOKED' | 'SHUTDOWN',
    message: string,
  ) {
    super(message);
    this.name = 'AbortReason';
  }
}
