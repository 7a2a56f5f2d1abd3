import type { Role } from '../tenancy/index.js';

/**
 * How far a role reaches on a route: every resource of the caller's tenant, or only the caller's
 * own (what "own" means is the route's {@link Owned} kind). Nothing ever reaches another tenant.
 */
export const Reach = { tenant: 'tenant', own: 'own' } as const;
export type Reach = (typeof Reach)[keyof typeof Reach];

/**
 * What a caller owns, per kind of resource: the ownership rule a route with an `own` reach
 * applies. A resource beyond the caller's reach is answered exactly as one that does not exist
 * (404 with the same message), so its existence never shows.
 */
export const Owned = {
  invocation: 'the invocations it made',
  approval: 'the approvals of its own calls',
  auditRecord:
    "the audit records of its own calls and approvals, and of what it did itself; the tenant's own records (lifecycle, policy, principals, leases) are not",
  event: 'the events of its own calls and approvals',
  tool: 'the tools of its release closure',
  release: 'its own agent release',
  token: 'its own tokens',
  mcpSession: 'the MCP sessions it opened, with the token it opened them with',
} as const;
export type Owned = keyof typeof Owned;

/** Who may call one route. */
export interface RouteAccess {
  /** Each role allowed and its reach; a role not named is refused (403). `public`: no token. */
  roles: 'public' | Partial<Record<Role, Reach>>;
  /** What a role with an `own` reach owns here. Required when some role's reach is `own`. */
  owns?: Owned;
  /** Why, where the decision is not the plain reading of DESIGN §6 (shown in docs/api.md). */
  why?: string;
}

const T = Reach.tenant;
const O = Reach.own;
/** Every person's role (not agents), all reaching the tenant. */
const PEOPLE = { reviewer: T, operator: T, maintainer: T, admin: T } as const;
/** Every role; agents reach their own only. */
const EVERYONE_OWN_AGENT = { agent: O, ...PEOPLE } as const;

/**
 * THE authorization table: every route the gateway serves (`METHOD /url`, Fastify's `:param`
 * syntax) → the roles that may call it and how far each reaches. The server consults it for every
 * request (REST and `/mcp`), the OpenAPI document and docs/api.md are generated from it, and the
 * role × route matrix test is driven by it. A principal holding the `agent` role acts as an agent
 * only, whatever else it holds (new principals cannot combine it with another role).
 */
export const ACCESS = {
  // Registry
  'POST /v1/events': {
    roles: { maintainer: T, admin: T },
    why: 'release events are publications: asset maintainers publish tool versions, admins publish agent releases (both arrive on this one route)',
  },
  'POST /v1/tools/import-openapi': {
    roles: { maintainer: T, admin: T },
    why: 'publishes tool versions, as POST /v1/events does (a dry run only returns them)',
  },
  'GET /v1/tools': { roles: { agent: O, ...PEOPLE }, owns: 'tool' },
  'GET /v1/agent-releases': { roles: { agent: O, ...PEOPLE }, owns: 'release' },

  // Invocations
  'POST /v1/invocations': { roles: { agent: O }, owns: 'invocation' },
  'GET /v1/invocations': {
    roles: EVERYONE_OWN_AGENT,
    owns: 'invocation',
    why: 'DESIGN §6 names operators; reviewers read the calls they approve, maintainers the calls of the tools they bind, admins the decisions their policy makes',
  },
  'GET /v1/invocations/:id': { roles: EVERYONE_OWN_AGENT, owns: 'invocation' },
  'GET /v1/invocations/:id/receipt': { roles: EVERYONE_OWN_AGENT, owns: 'invocation' },

  // Evidence
  'GET /v1/receipt-keys': { roles: 'public' },
  'GET /v1/audit/checkpoint': {
    roles: { agent: T, ...PEOPLE },
    why: 'a signed tree head shows no record; agents need it to check the proofs of their own records',
  },
  'GET /v1/audit/proof': { roles: EVERYONE_OWN_AGENT, owns: 'auditRecord' },
  'GET /v1/audit/consistency': {
    roles: { agent: T, ...PEOPLE },
    why: 'hashes only, no record: anyone holding a checkpoint may check the log was never rewritten',
  },
  'GET /v1/audit/records/:index': { roles: EVERYONE_OWN_AGENT, owns: 'auditRecord' },

  // Policy
  'GET /v1/policies/tenant': { roles: PEOPLE },
  'PUT /v1/policies/tenant': { roles: { admin: T } },
  'GET /v1/policies/projects/:project': { roles: PEOPLE },
  'PUT /v1/policies/projects/:project': { roles: { admin: T } },

  // Approvals
  'GET /v1/approvals': {
    roles: { agent: O, reviewer: T, operator: T, admin: T },
    owns: 'approval',
    why: 'operators resolve Uncertain effects of gated calls (who approved is evidence); admins tune the policy that gates calls',
  },
  'GET /v1/approvals/:id': {
    roles: { agent: O, reviewer: T, operator: T, admin: T },
    owns: 'approval',
  },
  'POST /v1/approvals/:id/approve': {
    roles: { reviewer: T },
    why: 'never the requester of the call (refused whatever its roles)',
  },
  'POST /v1/approvals/:id/reject': { roles: { reviewer: T } },

  // Uncertain effects
  'GET /v1/uncertain': { roles: { operator: T } },
  'POST /v1/invocations/:id/resolve': { roles: { operator: T } },

  // Events
  'GET /v1/events/stream': { roles: EVERYONE_OWN_AGENT, owns: 'event' },

  // Principals and tokens
  'GET /v1/principals': { roles: { admin: T } },
  'POST /v1/principals': { roles: { admin: T } },
  'GET /v1/tokens': {
    roles: { agent: O, reviewer: O, operator: O, maintainer: O, admin: T },
    owns: 'token',
  },
  'POST /v1/tokens': { roles: { admin: T } },
  'POST /v1/tokens/:id/revoke': {
    roles: { agent: O, reviewer: O, operator: O, maintainer: O, admin: T },
    owns: 'token',
  },
  'POST /v1/tokens/:id/rotate': {
    roles: { agent: O, reviewer: O, operator: O, maintainer: O, admin: T },
    owns: 'token',
    why: 'rotating your own token keeps its expiry; only an admin gives the new token a new one',
  },

  // Secrets
  'GET /v1/secrets': { roles: { admin: T } },
  'PUT /v1/secrets/:name': { roles: { admin: T } },
  'POST /v1/secrets/:name/rotate': { roles: { admin: T } },
  'DELETE /v1/secrets/:name': { roles: { admin: T } },

  // Upstream MCP servers (DESIGN §5)
  'GET /v1/mcp-servers': {
    roles: { operator: T, maintainer: T, admin: T },
    why: 'operators watch health (degraded servers fail calls before effect)',
  },
  'GET /v1/mcp-servers/:id': { roles: { operator: T, maintainer: T, admin: T } },
  'POST /v1/mcp-servers': {
    roles: { admin: T },
    why: 'a stdio server is a command the gateway runs: registering one is the platform admin’s (DESIGN §5, §6)',
  },
  'POST /v1/mcp-servers/:id/verify': {
    roles: { maintainer: T, admin: T },
    why: 'discovery again changes no command; maintainers run it to see the tools they bind',
  },
  'POST /v1/mcp-servers/:id/activate': { roles: { maintainer: T, admin: T } },
  'POST /v1/mcp-servers/:id/retire': { roles: { admin: T } },
  'POST /v1/mcp-servers/:id/bindings': {
    roles: { maintainer: T },
    why: 'the class a tool is bound with decides what needs approval: the asset maintainer’s call, not the admin who registered the server (DESIGN §5, §6)',
  },
  'POST /v1/mcp-servers/:id/bindings/:tool/reapprove': { roles: { maintainer: T } },

  // The agents' MCP endpoint
  'POST /mcp': { roles: { agent: O }, owns: 'mcpSession' },
  'DELETE /mcp': { roles: { agent: O }, owns: 'mcpSession' },
  'GET /mcp': { roles: { agent: O }, owns: 'mcpSession' },

  // Studio sign-in (the routes read the token or cookie they are sent) and the Studio's files
  'POST /v1/sessions': {
    roles: 'public',
    why: 'the sign-in itself: the route checks the bearer token it is sent, a person’s (never an agent’s)',
  },
  'GET /v1/sessions/current': {
    roles: 'public',
    why: 'answers the session of the cookie sent, or 401',
  },
  'DELETE /v1/sessions/current': {
    roles: 'public',
    why: 'signs out the session of the cookie sent, with its CSRF token',
  },
  'GET /studio': {
    roles: 'public',
    why: 'the built front end: files, no data; each call it makes is decided here on its own',
  },
  'GET /studio/*': {
    roles: 'public',
    why: 'the built front end: files, no data; each call it makes is decided here on its own',
  },

  // Operations
  'GET /healthz': { roles: 'public' },
  'GET /readyz': { roles: 'public' },
  'GET /metrics': { roles: 'public' },
  'GET /openapi.json': { roles: 'public' },
  'GET /.well-known/oauth-protected-resource': {
    roles: 'public',
    why: 'where OAuth clients find the authorization server (RFC 9728); names no tenant data',
  },
  'GET /.well-known/oauth-protected-resource/mcp': {
    roles: 'public',
    why: 'the same metadata for /mcp, where MCP clients look first',
  },
} as const satisfies Record<string, RouteAccess>;

/** A route the table names: `METHOD /url`. */
export type RouteKey = keyof typeof ACCESS;

/** The access of a route, or undefined when the table does not name it. */
export function accessOf(method: string, url: string): RouteAccess | undefined {
  const key = `${method === 'HEAD' ? 'GET' : method} ${url}`;
  return (ACCESS as Record<string, RouteAccess>)[key];
}
