/**
 * Which roles the gateway lets call the routes the Studio's buttons use: a copy of the server's
 * access table (src/http/access-table.ts), which test/studio/studio-constants.test.ts checks. The
 * Studio only hides what a role cannot do; the server still judges every request.
 */
export const ROUTE_ROLES = {
  'GET /v1/mcp-servers': ['operator', 'maintainer', 'admin'],
  'POST /v1/mcp-servers': ['admin'],
  'POST /v1/mcp-servers/:id/verify': ['maintainer', 'admin'],
  'POST /v1/mcp-servers/:id/activate': ['maintainer', 'admin'],
  'POST /v1/mcp-servers/:id/retire': ['admin'],
  'POST /v1/mcp-servers/:id/bindings': ['maintainer'],
  'POST /v1/mcp-servers/:id/bindings/:tool/reapprove': ['maintainer'],
  'GET /v1/tools': ['reviewer', 'operator', 'maintainer', 'admin'],
  'GET /v1/agent-releases': ['reviewer', 'operator', 'maintainer', 'admin'],
} as const satisfies Record<string, readonly string[]>;

/** A route the Studio calls. */
export type StudioRoute = keyof typeof ROUTE_ROLES;

/** True when someone holding `roles` may call `route`. */
export function may(roles: readonly string[], route: StudioRoute): boolean {
  const allowed: readonly string[] = ROUTE_ROLES[route];
  return roles.some((r) => allowed.includes(r));
}
