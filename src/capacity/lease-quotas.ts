import type { Lease } from './lease.js';

/**
 * How many leases of one pool a tenant, and one agent (the principal that asked), may hold at
 * once, waiting included in neither: a request over its quota waits in the queue within its
 * budget like one short of capacity, without holding up the others.
 */
export interface LeaseQuotas {
  /** Most active leases of one tenant in the pool. */
  tenantLeases: number;
  /** Most active leases of one agent in the pool. */
  agentLeases: number;
}

/** Whose quota stops a request: the tenant's or the agent's. */
export type QuotaScope = 'tenant' | 'agent';

/** A quota a request is over: whose, its limit, and what that holder has now. */
export interface QuotaBreach {
  scope: QuotaScope;
  /** The tenant id or the agent's principal id. */
  holder: string;
  limit: number;
  held: number;
}

/** Who a lease (or a request for one) counts against. */
export type LeaseOwner = Pick<Lease, 'tenant' | 'agent' | 'pool'>;

/**
 * The first quota `request` would go over given `held` (the pool's active and promised leases),
 * or null when it is within both. An owner without an agent (an MCP upstream's lease) counts
 * against its tenant only.
 */
export function quotaBreach(
  quotas: LeaseQuotas | undefined,
  request: LeaseOwner,
  held: Iterable<LeaseOwner>,
): QuotaBreach | null {
  if (!quotas) return null;
  let tenant = 0;
  let agent = 0;
  for (const l of held) {
    if (l.pool !== request.pool || l.tenant !== request.tenant) continue;
    tenant += 1;
    if (request.agent !== null && (l.agent ?? null) === request.agent) agent += 1;
  }
  if (request.agent !== null && agent >= quotas.agentLeases)
    return { scope: 'agent', holder: request.agent, limit: quotas.agentLeases, held: agent };
  if (tenant >= quotas.tenantLeases)
    return { scope: 'tenant', holder: request.tenant, limit: quotas.tenantLeases, held: tenant };
  return null;
}
