import { ProtocolError, ProtocolErrorCode } from '@modelcontextprotocol/server';
import { ErrorCode, GatehouseError } from '../../core/index.js';
import { HTTP_STATUS_OF } from '../error-status.js';

/**
 * Error code → JSON-RPC error code: the MCP edge's mapping table (tRPC's `JSONRPC2_TO_HTTP_CODE`
 * is the model). Invalid requests are JSON-RPC's own `-32602`; the rest use tRPC's numbers in the
 * server range, avoiding `-32021`/`-32022`, which MCP reserves.
 */
export const JSONRPC_CODE_OF: Record<ErrorCode, number> = {
  INVALID_INPUT: ProtocolErrorCode.InvalidParams,
  INVALID_EVENT: ProtocolErrorCode.InvalidParams,
  INVALID_DESCRIPTOR: ProtocolErrorCode.InvalidParams,
  INVALID_POLICY: ProtocolErrorCode.InvalidParams,
  IDEMPOTENCY_KEY_REQUIRED: ProtocolErrorCode.InvalidParams,
  IDEMPOTENCY_KEY_REUSED: ProtocolErrorCode.InvalidParams,
  UNAUTHENTICATED: -32001,
  FORBIDDEN: -32003,
  CREDENTIAL_SCOPE_DENIED: -32003,
  NOT_FOUND: -32004,
  CONFLICT: -32009,
  ILLEGAL_STATE: -32009,
  EFFECT_UNCERTAIN: -32009,
  APPROVAL_STALE: -32009,
  APPROVAL_PENDING: -32009,
  APPROVAL_CONSUMED: -32009,
  CREDENTIAL_LEASE_ENDED: -32009,
  ATTEMPT_IDS_IN_USE: -32009,
  CREDENTIAL_UNAVAILABLE: -32012,
  PAYLOAD_TOO_LARGE: -32013,
  METHOD_NOT_ALLOWED: ProtocolErrorCode.InvalidRequest,
  UNSUPPORTED_MEDIA_TYPE: ProtocolErrorCode.InvalidRequest,
  CAPACITY_EXHAUSTED: -32029,
  QUOTA_EXCEEDED: -32029,
  UNAVAILABLE: -32000,
  INTERNAL: ProtocolErrorCode.InternalError,
};

const INTERNAL_MESSAGE = 'Gatehouse failed to serve this request; the failure is in its log.';

/** Any thrown value as a protocol error; foreign errors become INTERNAL without their message. */
export function toProtocolError(err: unknown): ProtocolError {
  if (err instanceof ProtocolError) return err;
  if (err instanceof GatehouseError) {
    return new ProtocolError(JSONRPC_CODE_OF[err.code], err.message, {
      code: err.code,
      details: err.details,
    });
  }
  return new ProtocolError(ProtocolErrorCode.InternalError, INTERNAL_MESSAGE, {
    code: ErrorCode.INTERNAL,
  });
}

/** A refusal before any JSON-RPC message is read: the HTTP status and a JSON-RPC error body. */
export function jsonRpcRefusal(err: unknown): {
  status: number;
  body: {
    jsonrpc: '2.0';
    id: null;
    error: { code: number; message: string; data: { code: ErrorCode } };
  };
} {
  const e =
    err instanceof GatehouseError ? err : new GatehouseError(ErrorCode.INTERNAL, INTERNAL_MESSAGE);
  return {
    status: HTTP_STATUS_OF[e.code],
    body: {
      jsonrpc: '2.0',
      id: null,
      error: { code: JSONRPC_CODE_OF[e.code], message: e.message, data: { code: e.code } },
    },
  };
}
