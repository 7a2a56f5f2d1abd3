import type { Environment, EnvironmentClass } from '../../core/index.js';
import type { Role, StoredPrincipal, StoredToken, Tenant } from '../../tenancy/index.js';
import type { Tables } from '../schema/tables.js';

/** A tenant from its row. */
export function toTenant(r: Tables['tenants']): Tenant {
  return { id: r.id, name: r.name, createdAt: r.created_at };
}

/** An environment from its row (the frozen flag is 0/1). */
export function toEnvironment(r: Tables['environments']): Environment {
  return {
    tenant: r.tenant,
    project: r.project,
    name: r.name,
    class: r.class as EnvironmentClass,
    frozen: r.frozen === 1,
  };
}

/** The row of an environment. */
export function environmentRow(e: Environment): Tables['environments'] {
  return {
    tenant: e.tenant,
    project: e.project,
    name: e.name,
    class: e.class,
    frozen: e.frozen ? 1 : 0,
  };
}

/** A principal from its row. */
export function toPrincipal(r: Tables['principals']): StoredPrincipal {
  return {
    id: r.id,
    tenant: r.tenant,
    name: r.name,
    roles: JSON.parse(r.roles) as Role[],
    project: r.project,
    agent:
      r.agent_id !== null && r.agent_version !== null
        ? { id: r.agent_id, version: r.agent_version }
        : null,
    createdAt: r.created_at,
  };
}

/** The row of a principal. */
export function principalRow(p: StoredPrincipal): Tables['principals'] {
  return {
    id: p.id,
    tenant: p.tenant,
    name: p.name,
    roles: JSON.stringify(p.roles),
    project: p.project,
    agent_id: p.agent?.id ?? null,
    agent_version: p.agent?.version ?? null,
    created_at: p.createdAt,
  };
}

/** A token from its row. */
export function toToken(r: Tables['tokens']): StoredToken {
  return {
    id: r.id,
    tenant: r.tenant,
    principal: r.principal,
    label: r.label,
    hash: r.hash,
    createdAt: r.created_at,
    createdBy: r.created_by,
    expiresAt: r.expires_at,
    revokedAt: r.revoked_at,
    revokedBy: r.revoked_by,
    revokeReason: r.revoke_reason,
    replacedBy: r.replaced_by,
    lastUsedAt: r.last_used_at,
  };
}

/** The row of a token. */
export function tokenRow(t: StoredToken): Tables['tokens'] {
  return {
    id: t.id,
    tenant: t.tenant,
    principal: t.principal,
    label: t.label,
    hash: t.hash,
    created_at: t.createdAt,
    created_by: t.createdBy,
    expires_at: t.expiresAt,
    revoked_at: t.revokedAt,
    revoked_by: t.revokedBy,
    revoke_reason: t.revokeReason,
    replaced_by: t.replacedBy,
    last_used_at: t.lastUsedAt,
  };
}
