import { ErrorCode, GatehouseError, isGatehouseError } from '../core/index.js';
import type { GatewayServices } from './services.js';

/**
 * Checks that audit record `index` of the tenant's log is `owner`'s, and answers a record that is
 * not exactly as one beyond the log (the same 404), so an agent learns nothing of another's.
 * A record is a principal's when it is about one of its calls (subject `invocation/<id>`) or of
 * the approvals of its calls (`approval/<id>`), or when the principal itself did what it records
 * (its actor: a refused MCP request, a passed-through read, its own token revoked). The tenant's
 * lifecycle records (tenants, projects, policies, principals, leases, descriptors) are no one's.
 * @throws GatehouseError NOT_FOUND.
 */
export async function requireOwnAuditRecord(
  s: GatewayServices,
  tenant: string,
  index: number,
  owner: string,
): Promise<void> {
  const missing = new GatehouseError(
    ErrorCode.NOT_FOUND,
    `Audit record ${index} does not exist in this tenant's log.`,
  );
  let record: { subject?: unknown; actor?: unknown };
  try {
    record = (await s.auditLog.record(tenant, index)).record as typeof record;
  } catch (err) {
    if (isGatehouseError(err, ErrorCode.NOT_FOUND)) throw missing;
    throw err;
  }
  if (record.actor === owner) return;
  const subject = typeof record.subject === 'string' ? record.subject : '';
  const [kind, id] = [
    subject.slice(0, subject.indexOf('/')),
    subject.slice(subject.indexOf('/') + 1),
  ];
  try {
    if (kind === 'invocation') return void (await s.invocations.get(tenant, id, owner));
    if (kind === 'approval') return void (await s.approvals.get(tenant, id, owner));
  } catch (err) {
    if (!isGatehouseError(err, ErrorCode.NOT_FOUND)) throw err;
  }
  throw missing;
}
