import type { JWTPayload } from 'jose';
import { ErrorCode, GatehouseError } from '../core/index.js';
import { ROLES } from '../tenancy/index.js';
import type { Principal, Role } from '../tenancy/index.js';

/** Which claims of an access token name the principal's tenant, roles, project and agent release. */
export interface ClaimNames {
  tenant: string;
  roles: string;
  project: string;
  /** `AGENT@VERSION`, for agents. */
  agent: string;
}

/** The claim names used when none are configured. */
export const DEFAULT_CLAIMS: ClaimNames = {
  tenant: 'gatehouse_tenant',
  roles: 'gatehouse_roles',
  project: 'gatehouse_project',
  agent: 'gatehouse_agent',
};

function refuse(message: string): GatehouseError {
  return new GatehouseError(ErrorCode.UNAUTHENTICATED, `The access token ${message}.`);
}

function stringClaim(payload: JWTPayload, name: string): string | undefined {
  const v = payload[name];
  if (v === undefined) return undefined;
  if (typeof v !== 'string' || v === '' || v.length > 200)
    throw refuse(`has claim ${name}, which must be a non-empty string of at most 200 characters`);
  return v;
}

/** Roles from a JSON array of names or a space-separated string (as OAuth scopes are). */
function rolesOf(payload: JWTPayload, name: string): Role[] {
  const v = payload[name];
  const names = typeof v === 'string' ? v.split(' ').filter((s) => s !== '') : v;
  if (!Array.isArray(names) || names.length === 0)
    throw refuse(
      `names no roles: claim ${name} must list at least one of ${ROLES.join(', ')} (an array, or a space-separated string)`,
    );
  const unknown = names.filter((r) => !(ROLES as readonly unknown[]).includes(r));
  if (unknown.length > 0)
    throw refuse(
      `names unknown roles in claim ${name}: ${unknown.map((r) => JSON.stringify(r)).join(', ')} (roles are ${ROLES.join(', ')})`,
    );
  return [...new Set(names as Role[])];
}

/**
 * The principal a verified access token names: `oauth:SUB` in the tenant of its tenant claim,
 * with the roles of its roles claim; an agent also needs its project and agent release claims.
 * @throws GatehouseError UNAUTHENTICATED naming the claim that is missing or wrong
 */
export function principalOf(
  payload: JWTPayload,
  claims: ClaimNames,
  knownTenant: (id: string) => boolean,
): Principal {
  const sub = payload.sub;
  if (typeof sub !== 'string' || sub === '' || sub.length > 200)
    throw refuse('has no usable subject (claim sub)');
  const tenant = stringClaim(payload, claims.tenant);
  if (tenant === undefined) throw refuse(`names no tenant (claim ${claims.tenant})`);
  if (!knownTenant(tenant))
    throw refuse(`names tenant ${tenant}, which this gateway does not have`);
  const roles = rolesOf(payload, claims.roles);
  if (!roles.includes('agent'))
    return { id: `oauth:${sub}`, tenant, name: sub, roles, project: null, agent: null };
  const project = stringClaim(payload, claims.project);
  const release = stringClaim(payload, claims.agent);
  const at = release?.lastIndexOf('@') ?? -1;
  if (project === undefined || release === undefined || at <= 0 || at === release.length - 1)
    throw refuse(
      `is an agent's, so it must name its project (claim ${claims.project}) and its agent release as AGENT@VERSION (claim ${claims.agent})`,
    );
  return {
    id: `oauth:${sub}`,
    tenant,
    name: sub,
    // An agent is an agent only.
    roles: ['agent'],
    project,
    agent: { id: release.slice(0, at), version: release.slice(at + 1) },
  };
}
