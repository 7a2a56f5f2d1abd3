import { ErrorCode, GatehouseError } from '../../core/index.js';
import type { Approval } from '../../approvals/index.js';
import type { Lease } from '../../capacity/index.js';
import type { InvocationRecord } from '../../invocation/index.js';
import type { Tables } from '../schema/tables.js';

/** The row of an invocation record (the record itself as JSON beside its lookup columns). */
export function invocationRow(r: InvocationRecord): Tables['invocations'] {
  return {
    id: r.id,
    tenant: r.tenant,
    principal: r.principal,
    idempotency_key: r.idempotencyKey,
    attempt: r.attempt,
    request_hash: r.requestHash,
    status: r.status,
    tool_id: `${r.tool.id}@${r.tool.version}`,
    record: JSON.stringify(r),
    created_at: r.createdAt,
    updated_at: r.updatedAt,
    node: r.node ?? null,
    tool_name: r.tool.id,
    agent_id: r.agent.id,
    environment: r.environment,
  };
}

/** An invocation record from its JSON column. */
export function parseInvocation(json: string | undefined): InvocationRecord | undefined {
  return json === undefined ? undefined : (JSON.parse(json) as InvocationRecord);
}

/** The row of a new approval request. */
export function approvalRow(a: Approval): Tables['approvals'] {
  return {
    id: a.id,
    tenant: a.tenant,
    invocation_id: a.invocationId,
    tool_id: `${a.tool.id}@${a.tool.version}`,
    status: a.status,
    version: a.version,
    record: JSON.stringify(a),
    expires_at: a.expiresAt,
    created_at: a.requestedAt,
    updated_at: a.requestedAt,
    requested_by: a.requestedBy,
  };
}

/** `approval`, consumed at `at` (one version on), for a step that uses it. */
export function consumedApproval(a: Approval | undefined, id: string, at: string): Approval {
  if (!a || a.status !== 'approved')
    throw new Error(`approval ${id} is not approved any more (${a?.status ?? 'missing'})`);
  return { ...a, status: 'consumed', consumedAt: at, version: a.version + 1 };
}

/** The row of a new lease. */
export function leaseRow(l: Lease): Tables['leases'] {
  return {
    id: l.id,
    tenant: l.tenant,
    pool: l.pool,
    holder: l.holder,
    status: l.status,
    record: JSON.stringify(l),
    expires_at: l.expiresAt,
    created_at: l.createdAt,
    updated_at: l.createdAt,
    node: l.node ?? null,
  };
}

/** Why a step that was to consume approval `id` failed: it is not `approved` any more. */
export function approvalConsumedError(id: string, cause: unknown): GatehouseError {
  return new GatehouseError(
    ErrorCode.APPROVAL_CONSUMED,
    `Approval ${id} can no longer be used: it was consumed, expired or invalidated meanwhile.`,
    { cause },
  );
}
