import { DENIALS, ErrorCode, GatehouseError, isDenialCode } from '../core/index.js';
import type { DenialCode } from '../core/index.js';
import type { InvocationRecord } from '../invocation/index.js';

/** Error code → HTTP status: the REST edge's mapping table. */
export const HTTP_STATUS_OF: Record<ErrorCode, number> = {
  INVALID_INPUT: 400,
  INVALID_EVENT: 422,
  INVALID_DESCRIPTOR: 422,
  INVALID_POLICY: 422,
  UNAUTHENTICATED: 401,
  FORBIDDEN: 403,
  NOT_FOUND: 404,
  CONFLICT: 409,
  IDEMPOTENCY_KEY_REQUIRED: 400,
  IDEMPOTENCY_KEY_REUSED: 422,
  ILLEGAL_STATE: 409,
  EFFECT_UNCERTAIN: 409,
  APPROVAL_STALE: 409,
  APPROVAL_PENDING: 409,
  APPROVAL_CONSUMED: 409,
  CAPACITY_EXHAUSTED: 503,
  QUOTA_EXCEEDED: 429,
  ATTEMPT_IDS_IN_USE: 409,
  PAYLOAD_TOO_LARGE: 413,
  METHOD_NOT_ALLOWED: 405,
  UNSUPPORTED_MEDIA_TYPE: 415,
  UNAVAILABLE: 503,
  CREDENTIAL_UNAVAILABLE: 424,
  CREDENTIAL_SCOPE_DENIED: 403,
  CREDENTIAL_LEASE_ENDED: 409,
  INTERNAL: 500,
};

/**
 * Denial code → HTTP status of the denied invocation: 422 when the request itself is invalid,
 * 403 for other denials. Derived from the denial table, so a new code has its status.
 */
export const HTTP_STATUS_OF_DENIAL = Object.fromEntries(
  Object.entries(DENIALS).map(([code, meaning]) => [code, meaning.invalidRequest ? 422 : 403]),
) as Record<DenialCode, 403 | 422>;

/**
 * The HTTP status of an invocation record (DESIGN §9): 200 for a decided outcome, 202 while
 * awaiting approval or running, 422 for a validation denial, 403 for other denials.
 */
export function invocationStatusCode(record: InvocationRecord): number {
  switch (record.status) {
    case 'denied':
      return isDenialCode(record.error?.code ?? '')
        ? HTTP_STATUS_OF_DENIAL[record.error!.code as DenialCode]
        : 403;
    case 'awaiting_approval':
    case 'queued':
    case 'running':
      return 202;
    case 'failed':
    case 'uncertain':
    case 'observed':
      return 200;
  }
}

/** The JSON error body and status of any thrown value; foreign errors become INTERNAL. */
export function errorBody(err: unknown): {
  status: number;
  body: { error: { code: string; message: string; details: Record<string, unknown> } };
} {
  if (err instanceof GatehouseError) {
    return {
      status: HTTP_STATUS_OF[err.code],
      body: { error: { code: err.code, message: err.message, details: err.details } },
    };
  }
  return {
    status: 500,
    body: {
      error: {
        code: ErrorCode.INTERNAL,
        message: 'Gatehouse failed to serve this request; the failure is in its log.',
        details: {},
      },
    },
  };
}
