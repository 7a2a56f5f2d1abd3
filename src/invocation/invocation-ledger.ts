import type { AuditRecordDraft, EventType, OutboxEvent } from '../core/index.js';
import type { InvocationRecord } from './invocation-record.js';
import type { InvocationStatus } from './invocation-status.js';

/** What every audit record and event about an invocation says of it. */
export function invocationSummary(
  record: InvocationRecord,
  status: InvocationStatus,
): Record<string, unknown> {
  return {
    invocationId: record.id,
    tool: record.tool,
    agent: record.agent,
    status,
    requestHash: record.requestHash,
  };
}

/** An outbox event about an invocation. */
export function invocationEvent(
  record: InvocationRecord,
  type: EventType,
  at: string,
  data: Record<string, unknown>,
): OutboxEvent {
  return {
    type,
    tenant: record.tenant,
    subject: `invocation/${record.id}`,
    at,
    data,
    owner: record.principal,
  };
}

/** An audit record about an invocation. */
export function invocationAudit(
  record: InvocationRecord,
  type: string,
  at: string,
  actor: string,
  data: Record<string, unknown>,
): AuditRecordDraft {
  return { tenant: record.tenant, type, subject: `invocation/${record.id}`, at, actor, data };
}
