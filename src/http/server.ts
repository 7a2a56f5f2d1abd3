import Fastify from 'fastify';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { ErrorCode, GatehouseError, IllegalStateError } from '../core/index.js';
import type { Principal } from '../tenancy/index.js';
import { errorBody } from './error-status.js';
import { translateFastifyError } from './fastify-errors.js';
import { mountMcpEndpoint } from './mcp-endpoint/endpoint.js';
import type { McpEndpointOptions } from './mcp-endpoint/endpoint.js';
import { MCP_ENDPOINT_ROUTES, openApiDocument, undocumentedRoutes } from './openapi.js';
import type { Route } from './route.js';
import { bearerToken } from './bearer.js';
import type { GatewayServices } from './services.js';
import { evidenceRoutes } from './routes/evidence-routes.js';
import { invocationRoutes } from './routes/invocation-routes.js';
import { policyRoutes } from './routes/policy-routes.js';
import { registryRoutes } from './routes/registry-routes.js';
import { approvalRoutes } from './routes/approval-routes.js';
import { uncertainRoutes } from './routes/uncertain-routes.js';
import { eventStreamRoutes } from './routes/event-stream-routes.js';
import { principalRoutes } from './routes/principal-routes.js';
import { secretRoutes } from './routes/secret-routes.js';
import { mcpServerRoutes } from './routes/mcp-server-routes.js';
import { operationalRoutes } from './routes/operational-routes.js';

/** Options of {@link buildServer}. */
export interface ServerOptions {
  services: GatewayServices;
  version: string;
  /** Largest accepted request body in bytes (default 1 MiB). */
  bodyLimit?: number;
  /** Log each request (default false: the gateway's own records are the audit). */
  logger?: boolean;
  /** The agents' MCP endpoint `/mcp`: allowed hosts and origins beyond the local ones. */
  mcp?: McpEndpointOptions;
}

const anonymous: Principal = {
  id: 'anonymous',
  tenant: '',
  name: 'anonymous',
  roles: [],
  project: null,
  agent: null,
};

/** The REST API: a thin translation from HTTP to the parts, per DESIGN §9. */
export function buildServer(o: ServerOptions): FastifyInstance {
  const app = Fastify({
    logger: o.logger ?? false,
    bodyLimit: o.bodyLimit ?? 1024 * 1024,
    return503OnClosing: true,
    forceCloseConnections: true,
  });
  // Every route registered from here on, so the OpenAPI document can be checked against them.
  const registered: { method: string; url: string }[] = [];
  app.addHook('onRoute', (r) => {
    for (const method of [r.method].flat()) registered.push({ method, url: r.url });
  });
  const s = o.services;
  const routes: Route[] = [
    ...registryRoutes(s),
    ...invocationRoutes(s),
    ...evidenceRoutes(s),
    ...policyRoutes(s),
    ...approvalRoutes(s),
    ...uncertainRoutes(s),
    ...eventStreamRoutes(s),
    ...principalRoutes(s),
    ...(s.secrets ? secretRoutes({ secrets: s.secrets }) : []),
    ...(s.mcp
      ? mcpServerRoutes({
          mcp: s.mcp,
          publish: (tenant, events, actor) => s.registry.applyEvents(tenant, events, actor),
        })
      : []),
    ...operationalRoutes(s, () => openapi),
  ];
  const openapi = openApiDocument([...routes, ...MCP_ENDPOINT_ROUTES], o.version);

  app.addContentTypeParser('text/plain', { parseAs: 'string' }, (_req, body, done) =>
    done(null, body),
  );

  for (const route of routes) {
    app.route({
      method: route.method,
      url: route.url,
      handler: async (req: FastifyRequest, reply: FastifyReply) => {
        const principal = route.roles === 'public' ? anonymous : authenticate(s, req, route);
        const answer = await route.handler(principal, req, reply);
        if (answer === null) return reply;
        void reply.code(answer.status);
        if (answer.contentType) void reply.type(answer.contentType);
        return answer.body;
      },
    });
  }

  mountMcpEndpoint(app, s, { ...o.mcp, version: o.version });

  // A route added without its description is a bug: the gateway refuses to start with it.
  app.addHook('onReady', (done) => {
    const missing = undocumentedRoutes(openapi, registered);
    done(
      missing.length === 0
        ? undefined
        : new IllegalStateError(
            `Routes missing from /openapi.json: ${missing.join(', ')}. Describe them in the route table (or MCP_ENDPOINT_ROUTES in src/http/openapi.ts).`,
          ),
    );
  });

  app.setNotFoundHandler((req, reply) => {
    void reply.code(404).send({
      error: {
        code: ErrorCode.NOT_FOUND,
        message: `No route ${req.method} ${req.url.split('?')[0]}; see /openapi.json.`,
        details: {},
      },
    });
  });
  app.setErrorHandler((err: unknown, req, reply) => {
    const translated = translateFastifyError(err, 'this gateway');
    const { status, body } = errorBody(translated);
    if (status >= 500) req.log.error({ err }, 'request failed');
    void reply.code(status).send(body);
  });
  return app;
}

function authenticate(s: GatewayServices, req: FastifyRequest, route: Route): Principal {
  const token = bearerToken(req.headers.authorization, 'token', 512);
  const principal = s.directory.authenticate(token);
  if (!principal)
    throw new GatehouseError(ErrorCode.UNAUTHENTICATED, 'The bearer token is not valid.');
  const allowed = route.roles as readonly string[];
  if (!principal.roles.some((r) => allowed.includes(r))) {
    throw new GatehouseError(
      ErrorCode.FORBIDDEN,
      `${route.method} ${route.url} needs one of the roles ${allowed.join(', ')}; you have ${principal.roles.join(', ')}.`,
    );
  }
  return principal;
}
