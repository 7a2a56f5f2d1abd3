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

/** How many leases (and promises) of one pool each tenant, and each agent of a tenant, holds. */
export interface PoolHoldings {
  tenants: Map<string, number>;
  /** By {@link agentKey}. */
  agents: Map<string, number>;
}

/** The leases (and promises) of `pool` among `held`, counted once per tenant and per agent. */
export function poolHoldings(pool: string, ...held: Iterable<LeaseOwner>[]): PoolHoldings {
  const tenants = new Map<string, number>();
  const agents = new Map<string, number>();
  for (const group of held) {
    for (const l of group) {
      if (l.pool !== pool) continue;
      tenants.set(l.tenant, (tenants.get(l.tenant) ?? 0) + 1);
      if (l.agent !== null) {
        const key = agentKey(l.tenant, l.agent);
        agents.set(key, (agents.get(key) ?? 0) + 1);
      }
    }
  }
  return { tenants, agents };
}

/**
 * The first quota `request` would go over given `holdings` (of the request's pool), or null when
 * it is within both. An owner without an agent (an MCP upstream's lease) counts against its
 * tenant only.
 */
export function quotaBreach(
  quotas: LeaseQuotas,
  request: LeaseOwner,
  holdings: PoolHoldings,
): QuotaBreach | null {
  const tenant = holdings.tenants.get(request.tenant) ?? 0;
  if (request.agent !== null) {
    const agent = holdings.agents.get(agentKey(request.tenant, request.agent)) ?? 0;
    if (agent >= quotas.agentLeases)
      return { scope: 'agent', holder: request.agent, limit: quotas.agentLeases, held: agent };
  }
  if (tenant >= quotas.tenantLeases)
    return { scope: 'tenant', holder: request.tenant, limit: quotas.tenantLeases, held: tenant };
  return null;
}

function agentKey(tenant: string, agent: string): string {
  return `${tenant}\u0000${agent}`;
}
