import { Owned, accessOf } from './access-table.js';
import type { Route } from './route.js';

/** What the OpenAPI document says of one route: a {@link Route} without its handler. */
export type DocumentedRoute = Omit<Route, 'handler'>;

const rpc = { $ref: '#/components/schemas/JsonRpcMessage' };

/**
 * The agents' MCP endpoint (mounted by `mountMcpEndpoint`, outside the REST route table): one URL
 * taking JSON-RPC messages over Streamable HTTP.
 */
export const MCP_ENDPOINT_ROUTES: readonly DocumentedRoute[] = [
  {
    method: 'POST',
    url: '/mcp',
    tag: 'mcp',
    summary:
      "The agents' MCP endpoint (Streamable HTTP): initialize, tools/list (the release closure), tools/call (through the pipeline), resources and prompts of bound upstreams",
    headers: {
      'Mcp-Session-Id': {
        description: 'The session id initialize answered; every request after it sends it',
        required: false,
      },
      'Mcp-Protocol-Version': {
        description: 'The negotiated MCP protocol version',
        required: false,
      },
    },
    body: rpc,
    responses: {
      '200': 'a JSON-RPC response, as JSON or as a text/event-stream',
      '202': 'a notification or response accepted',
      '400': 'not JSON-RPC, or no session id after initialize',
      '401': 'no valid agent token',
      '403': 'a Host or Origin not allowed',
      '404': 'no such session of this agent',
      '413': 'body too large',
    },
  },
  {
    method: 'DELETE',
    url: '/mcp',
    tag: 'mcp',
    summary: 'End an MCP session',
    headers: { 'Mcp-Session-Id': { description: 'The session to end', required: true } },
    responses: { '200': 'the session ended', '404': 'no such session of this agent' },
  },
  {
    method: 'GET',
    url: '/mcp',
    tag: 'mcp',
    summary:
      "A session's stream of notifications (server-sent events): tools/list_changed, upstream log messages and resource updates",
    headers: { 'Mcp-Session-Id': { description: 'The session', required: true } },
    responses: {
      '200': 'text/event-stream, open until the session or its token ends',
      '404': 'no such session of this agent',
      '409': 'the session already has its stream open',
    },
  },
];

/** The OpenAPI 3.1 document of the gateway, generated from the route table. */
export function openApiDocument(
  routes: readonly DocumentedRoute[],
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
    const access = accessOf(r.method, r.url);
    paths[path][r.method.toLowerCase()] = {
      summary: r.summary,
      tags: [r.tag],
      ...(access === undefined || access.roles === 'public'
        ? { security: [] }
        : {
            description: `Roles: ${Object.entries(access.roles)
              .map(([role, reach]) =>
                reach === 'own' && access.owns ? `${role} (${Owned[access.owns]})` : role,
              )
              .join(', ')}.`,
          }),
      ...(params.length > 0 ? { parameters: params } : {}),
      ...(r.body
        ? { requestBody: { required: true, content: { 'application/json': { schema: r.body } } } }
        : {}),
      responses: Object.fromEntries(
        Object.entries(r.responses).map(([code, description]) => [
          code,
          { description, content: { [r.responseType ?? 'application/json']: {} } },
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
    components: {
      securitySchemes: { bearer: { type: 'http', scheme: 'bearer' } },
      schemas: {
        JsonRpcMessage: {
          description: 'A JSON-RPC 2.0 request, notification or response (or a batch of them)',
          type: ['object', 'array'],
        },
      },
    },
    security: [{ bearer: [] }],
    paths,
  };
}

/**
 * The registered routes (`METHOD /url`, Fastify's `:param` syntax) that `document` does not
 * describe; a HEAD route Fastify adds beside a GET counts as that GET.
 */
export function undocumentedRoutes(
  document: Record<string, unknown>,
  registered: readonly { method: string; url: string }[],
): string[] {
  const paths = document.paths as Record<string, Record<string, unknown>>;
  return registered
    .filter((r) => {
      const ops = paths[r.url.replace(/:(\w+)/g, '{$1}')];
      const method = r.method === 'HEAD' ? 'get' : r.method.toLowerCase();
      return ops?.[method] === undefined;
    })
    .map((r) => `${r.method} ${r.url}`);
}
