import { ErrorCode, GatehouseError } from '../core/index.js';
import type { Directory, Principal, Role } from '../tenancy/index.js';
import { Reach } from './access-table.js';
import type { RouteAccess } from './access-table.js';
import { bearerPrincipal, bearerToken, JWT } from './bearer.js';
import type { OAuthResource } from './services.js';

/** What the access table granted one request: how far it reaches, and with which token. */
export interface Grant {
  reach: Reach;
  /**
   * The principal whose own resources alone the request reaches (`reach` is `own`), or null when
   * it reaches the whole tenant. Handlers pass it to the parts, which answer a resource of anyone
   * else exactly as one that does not exist.
   */
  owner: string | null;
  /** The token the request came with; null on public routes. */
  token: { id: string; expiresAt: string } | null;
}

/** A caller of a public route. */
export const ANONYMOUS: Principal = {
  id: 'anonymous',
  tenant: '',
  name: 'anonymous',
  roles: [],
  project: null,
  agent: null,
};

/** What a public route is granted: nothing of any tenant. */
const PUBLIC_GRANT: Grant = { reach: Reach.tenant, owner: null, token: null };

/**
 * The roles a principal acts with: an agent is an agent only, whatever else it holds (a principal
 * made before agents could not combine roles may hold more).
 */
export function actingRoles(p: Principal): readonly Role[] {
  return p.roles.includes('agent') ? ['agent'] : p.roles;
}

/**
 * Authenticates the bearer token of a request to a route and checks the route's access: the
 * principal and what it is granted.
 * @throws GatehouseError UNAUTHENTICATED (no, malformed, unknown, expired or revoked token: the
 *   message says which), FORBIDDEN (no role the route allows; the message names them).
 */
export async function authorize(
  directory: Directory,
  route: string,
  access: RouteAccess,
  authorization: string | undefined,
  o: { noun?: string; maxLength?: number; oauth?: OAuthResource } = {},
): Promise<{ principal: Principal; grant: Grant }> {
  if (access.roles === 'public') return { principal: ANONYMOUS, grant: PUBLIC_GRANT };
  // A JWT is an OAuth access token: checked by the authorization server's keys when one is set.
  if (o.oauth) {
    const token = bearerToken(authorization, o.noun ?? 'token', OAUTH_TOKEN_MAX);
    if (JWT.test(token)) {
      const proved = await o.oauth.verifier.verify(token);
      return grantFor(route, access, proved.principal, proved.token);
    }
  }
  const proved = bearerPrincipal(directory, authorization, o);
  return grantFor(route, access, proved.principal, proved.token);
}

/** The longest OAuth access token read (JWTs with many claims run to a few kilobytes). */
const OAUTH_TOKEN_MAX = 8192;

/**
 * Checks the route's access for an authenticated principal (by a bearer token, or by a Studio
 * session when `token` is null): the principal and what it is granted.
 * @throws GatehouseError FORBIDDEN (no role the route allows; the message names them).
 */
export function grantFor(
  route: string,
  access: RouteAccess,
  principal: Principal,
  token: Grant['token'],
): { principal: Principal; grant: Grant } {
  const reach = reachOf(access, principal);
  if (reach === null) {
    const allowed = access.roles === 'public' ? [] : Object.keys(access.roles);
    throw new GatehouseError(
      ErrorCode.FORBIDDEN,
      `${route} needs one of the roles ${allowed.join(', ')}; you act as ${actingRoles(principal).join(', ') || 'no role'}.`,
      { details: { roles: allowed } },
    );
  }
  return { principal, grant: { reach, owner: reach === Reach.own ? principal.id : null, token } };
}

/** How far a principal reaches on a route: the widest of its acting roles, or null (refused). */
export function reachOf(access: RouteAccess, p: Principal): Reach | null {
  if (access.roles === 'public') return Reach.tenant;
  let reach: Reach | null = null;
  for (const role of actingRoles(p)) {
    const r = access.roles[role];
    if (r === Reach.tenant) return r;
    if (r === Reach.own) reach = r;
  }
  return reach;
}
