import { randomUUID } from 'node:crypto';
import type { RequestId } from '@modelcontextprotocol/server';
import { sha256Hex } from '../../core/index.js';
import type { Principal } from '../../tenancy/index.js';
import type { GatewayServices } from '../services.js';

/** The JSON-RPC request a `tools/call` arrived in. */
export interface CallOrigin {
  /** The MCP session it arrived in (always set on `/mcp`, which serves sessions only). */
  sessionId: string | undefined;
  /** Its JSON-RPC id: unique within a session, so only a retry of the same request repeats it. */
  requestId: RequestId;
  /** The request hash of the call. */
  hash: string;
}

/**
 * The idempotency key of a `tools/call` that names none in `_meta`.
 *
 * - Resuming after an approval (`_meta` names the approval): the key of the call that asked for
 *   it, so the approved invocation runs (and a repeat answers its record), in any session.
 * - Otherwise: a key of the JSON-RPC request — session id, request id and request hash — so a
 *   retry of that very request is answered from its record, while a later identical call (a new
 *   request id) runs again, as a client that knows nothing of Gatehouse expects.
 *
 * @throws GatehouseError NOT_FOUND when the approval is not one of this agent's calls.
 */
export async function derivedKey(
  s: Pick<GatewayServices, 'approvals' | 'invocations'>,
  p: Principal,
  approvalId: string | undefined,
  origin: CallOrigin,
): Promise<string> {
  if (approvalId !== undefined) {
    const approval = await s.approvals.get(p.tenant, approvalId, p.id);
    return (await s.invocations.get(p.tenant, approval.invocationId, p.id)).idempotencyKey;
  }
  // Without a session no request can be told from another: every call is a new one.
  if (origin.sessionId === undefined) return `mcp-${randomUUID()}`;
  const request = JSON.stringify([origin.sessionId, origin.requestId, origin.hash]);
  return `mcp-${sha256Hex(request)}`;
}
