/**
 * The one error class for failures, with stable string codes. Governance outcomes (a denial, a
 * suspension) are values, not exceptions; this class is for requests that cannot be served.
 * The edges (http/, cli/, mcp/) own the tables that map a code to a transport status.
 */
export const ErrorCode = {
  INVALID_INPUT: 'INVALID_INPUT',
  INVALID_EVENT: 'INVALID_EVENT',
  INVALID_DESCRIPTOR: 'INVALID_DESCRIPTOR',
  INVALID_POLICY: 'INVALID_POLICY',
  UNAUTHENTICATED: 'UNAUTHENTICATED',
  FORBIDDEN: 'FORBIDDEN',
  NOT_FOUND: 'NOT_FOUND',
  CONFLICT: 'CONFLICT',
  IDEMPOTENCY_KEY_REQUIRED: 'IDEMPOTENCY_KEY_REQUIRED',
  IDEMPOTENCY_KEY_REUSED: 'IDEMPOTENCY_KEY_REUSED',
  ILLEGAL_STATE: 'ILLEGAL_STATE',
  EFFECT_UNCERTAIN: 'EFFECT_UNCERTAIN',
  APPROVAL_STALE: 'APPROVAL_STALE',
  APPROVAL_PENDING: 'APPROVAL_PENDING',
  APPROVAL_CONSUMED: 'APPROVAL_CONSUMED',
  CAPACITY_EXHAUSTED: 'CAPACITY_EXHAUSTED',
  /** A per-principal or per-tenant limit is reached (details say whose and which). */
  QUOTA_EXCEEDED: 'QUOTA_EXCEEDED',
  /** The `runId` + `attemptId` of a call name a live attempt of another agent of the tenant. */
  ATTEMPT_IDS_IN_USE: 'ATTEMPT_IDS_IN_USE',
  PAYLOAD_TOO_LARGE: 'PAYLOAD_TOO_LARGE',
  /** The path exists but not for this method (`details.allow` lists those it has). */
  METHOD_NOT_ALLOWED: 'METHOD_NOT_ALLOWED',
  /** A body in a form the gateway does not read (a `Content-Encoding` other than identity). */
  UNSUPPORTED_MEDIA_TYPE: 'UNSUPPORTED_MEDIA_TYPE',
  UNAVAILABLE: 'UNAVAILABLE',
  /** A declared credential cannot be issued: the secret is missing, deleted or undecryptable. */
  CREDENTIAL_UNAVAILABLE: 'CREDENTIAL_UNAVAILABLE',
  /** A declared credential asks for a scope its secret does not grant. */
  CREDENTIAL_SCOPE_DENIED: 'CREDENTIAL_SCOPE_DENIED',
  /** The invocation's credential leases were revoked or have expired, or no time is left. */
  CREDENTIAL_LEASE_ENDED: 'CREDENTIAL_LEASE_ENDED',
  INTERNAL: 'INTERNAL',
} as const;
export type ErrorCode = (typeof ErrorCode)[keyof typeof ErrorCode];

/** Options of a {@link GatehouseError}. */
export interface GatehouseErrorOptions {
  /** Machine-readable facts a client can act on (a JSON pointer, the allowed values, an id). */
  details?: Record<string, unknown>;
  /** The underlying failure; never shown to a client. */
  cause?: unknown;
}

/**
 * A refused or failed request. `message` is written for a person: what was wrong, where, and what
 * to do. It is shown to clients unless the code is `INTERNAL`.
 */
export class GatehouseError extends Error {
  readonly code: ErrorCode;
  readonly details: Record<string, unknown>;

  constructor(code: ErrorCode, message: string, options: GatehouseErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'GatehouseError';
    this.code = code;
    this.details = options.details ?? {};
  }
}

/**
 * Misuse of our own code (a bug), as opposed to a refused request: an illegal lifecycle move,
 * a broken invariant. Always surfaces as `INTERNAL` at the edges.
 */
export class IllegalStateError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'IllegalStateError';
  }
}

/** True when `err` is a {@link GatehouseError}, optionally of the given code. */
export function isGatehouseError(err: unknown, code?: ErrorCode): err is GatehouseError {
  return err instanceof GatehouseError && (code === undefined || err.code === code);
}
