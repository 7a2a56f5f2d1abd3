import type { Route } from './route.js';

/** The OpenAPI 3.1 document of the REST API, generated from the route table. */
export function openApiDocument(
  routes: readonly Route[],
  version: string,
): Record<string, unknown> {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const r of routes) {
    const path = r.url.replace(/:(\w+)/g, '{$1}');
    const params = [
      ...[...r.url.matchAll(/:(\w+)/g)].map((m) => ({
        name: m[1],
        in: 'path',
        required: true,
        schema: { type: 'string' },
      })),
      ...Object.entries(r.query ?? {}).map(([name, q]) => ({
        name,
        in: 'query',
        required: false,
        description: q.description,
        schema: { type: q.type },
      })),
      ...Object.entries(r.headers ?? {}).map(([name, h]) => ({
        name,
        in: 'header',
        required: h.required,
        description: h.description,
        schema: { type: 'string' },
      })),
    ];
    paths[path] ??= {};
    paths[path][r.method.toLowerCase()] = {
      summary: r.summary,
      tags: [r.tag],
      ...(r.roles === 'public'
        ? { security: [] }
        : { description: `Roles: ${r.roles.join(', ')}.` }),
      ...(params.length > 0 ? { parameters: params } : {}),
      ...(r.body
        ? { requestBody: { required: true, content: { 'application/json': { schema: r.body } } } }
        : {}),
      responses: Object.fromEntries(
        Object.entries(r.responses).map(([code, description]) => [
          code,
          { description, content: { 'application/json': {} } },
        ]),
      ),
    };
  }
  return {
    openapi: '3.1.0',
    info: {
      title: 'Gatehouse',
      version,
      description:
        'A governed tool gateway for AI agents. Errors are {"error": {"code", "message", "details"}}.',
    },
    components: { securitySchemes: { bearer: { type: 'http', scheme: 'bearer' } } },
    security: [{ bearer: [] }],
    paths,
  };
}
