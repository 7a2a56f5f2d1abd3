/** A route as Fastify registered it: its method and its URL pattern (`/v1/approvals/:id`). */
export interface RegisteredRoute {
  method: string;
  url: string;
}

/**
 * The methods the gateway serves at `path` (a request path without its query), sorted, `OPTIONS`
 * included, for the `Allow` header of a 405 or an `OPTIONS` answer; empty when no route's pattern
 * matches the path, which is then a 404. A pattern matches as Fastify's router does for this
 * table: a `:name` segment takes any one non-empty segment, a final `*` takes the rest.
 */
export function allowedMethods(routes: readonly RegisteredRoute[], path: string): string[] {
  const segments = path.split('/');
  const methods = new Set<string>();
  for (const r of routes) if (patternMatches(r.url.split('/'), segments)) methods.add(r.method);
  if (methods.size === 0) return [];
  methods.add('OPTIONS');
  return [...methods].sort();
}

function patternMatches(pattern: readonly string[], segments: readonly string[]): boolean {
  for (const [i, p] of pattern.entries()) {
    if (p === '*' && i === pattern.length - 1) return segments.length >= pattern.length - 1;
    const s = segments[i];
    if (s === undefined) return false;
    if (p.startsWith(':') ? s === '' : p !== s) return false;
  }
  return segments.length === pattern.length;
}
