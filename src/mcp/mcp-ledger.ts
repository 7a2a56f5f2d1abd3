import { ErrorCode, GatehouseError } from '../core/index.js';
import type { AuditRecordDraft, OutboxEvent } from '../core/index.js';

/** The subject of a server's audit records: `mcp-server/<id>`. */
export const subject = (id: string) => `mcp-server/${id}`;

/** An audit record draft. */
export function audit(
  tenant: string,
  type: string,
  sub: string,
  at: string,
  actor: string,
  data: Record<string, unknown>,
): AuditRecordDraft {
  return { tenant, type, subject: sub, at, actor, data };
}

/** An outbox event about `mcp-server/<sub>`. */
export function event(
  type: OutboxEvent['type'],
  tenant: string,
  sub: string,
  at: string,
  data: Record<string, unknown>,
): OutboxEvent {
  return { type, tenant, subject: `mcp-server/${sub}`, at, data };
}

/** INVALID_INPUT naming the field. */
export function invalid(message: string, pointer: string): GatehouseError {
  return new GatehouseError(ErrorCode.INVALID_INPUT, message, { details: { pointer } });
}

/** CONFLICT. */
export function conflict(message: string): GatehouseError {
  return new GatehouseError(ErrorCode.CONFLICT, message);
}

/** NOT_FOUND. */
export function notFound(message: string): GatehouseError {
  return new GatehouseError(ErrorCode.NOT_FOUND, message);
}
