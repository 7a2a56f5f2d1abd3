import fastifyCookie from '@fastify/cookie';
import { randomUUID } from 'node:crypto';
import Fastify, { LogController } from 'fastify';
import type { FastifyBaseLogger, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Tracer } from '@opentelemetry/api';
import { noopTracer } from '../invocation/index.js';
import { ErrorCode, GatehouseError, IllegalStateError, cutText } from '../core/index.js';
import { allowedMethods } from './allowed-methods.js';
import { answerClientError } from './client-errors.js';
import { errorBody } from './error-status.js';
import { translateFastifyError } from './fastify-errors.js';
import { nulCharacterIn, undeclaredQueryParameter } from './request-parsing.js';
import { mountMcpEndpoint } from './mcp-endpoint/endpoint.js';
import type { McpEndpointOptions } from './mcp-endpoint/endpoint.js';
import { MCP_ENDPOINT_ROUTES, openApiDocument, undocumentedRoutes } from './openapi.js';
import type { Route } from './route.js';
import { accessOf } from './access-table.js';
import { authorize, grantFor } from './access.js';
import type { GatewayServices } from './services.js';
import { evidenceRoutes } from './routes/evidence-routes.js';
import { invocationRoutes } from './routes/invocation-routes.js';
import { policyRoutes } from './routes/policy-routes.js';
import { openApiImportRoutes } from './routes/openapi-import-routes.js';
import { registryRoutes } from './routes/registry-routes.js';
import { approvalRoutes } from './routes/approval-routes.js';
import { uncertainRoutes } from './routes/uncertain-routes.js';
import { eventStreamRoutes } from './routes/event-stream-routes.js';
import { principalRoutes } from './routes/principal-routes.js';
import { tokenRoutes } from './routes/token-routes.js';
import { secretRoutes } from './routes/secret-routes.js';
import { mcpServerRoutes } from './routes/mcp-server-routes.js';
import { bearerChallenge } from '../oauth/index.js';
import { oauthRoutes } from './routes/oauth-routes.js';
import { operationalRoutes } from './routes/operational-routes.js';
import { installBodyParsers, refuseEncodedBodies } from './body-parsers.js';
import { EventStreamHub } from './event-stream-hub.js';
import { DEFAULT_STREAM_LIMITS } from './event-stream-limits.js';
import type { StreamLimits } from './event-stream-limits.js';
import { DEFAULT_SERVER_LIMITS, SendWatch, limitedServerFactory } from './server-limits.js';
import type { ServerLimits, ServerTls } from './server-limits.js';
import { sessionRoutes } from './routes/session-routes.js';
import { studioRoutes } from './routes/studio-routes.js';
import { hasSessionCookie, sessionOf, sessionPrincipal } from './session-auth.js';
import type { StudioFiles } from './studio-files.js';
import { observeRequests, traceRoute } from './request-observation.js';

/** Options of {@link buildServer}. */
export interface ServerOptions {
  services: GatewayServices;
  version: string;
  /** Largest accepted request body in bytes (default 1 MiB). */
  bodyLimit?: number;
  /**
   * The structured log (a pino logger); without one nothing is logged. Lines logged while serving
   * a request carry its `requestId` (also answered as `X-Request-Id`) and the caller's `traceId`.
   */
  logger?: FastifyBaseLogger;
  /** Also log a line as each request arrives and as it is answered (default false). */
  logRequests?: boolean;
  /** The server span of each authenticated REST request; default a no-op tracer. */
  tracer?: Tracer;
  /** Request ids (default random UUIDs). */
  requestIds?: () => string;
  /** The agents' MCP endpoint `/mcp`: allowed hosts and origins beyond the local ones. */
  mcp?: McpEndpointOptions;
  /**
   * The reverse proxies (addresses, CIDR ranges, `loopback`…) whose `X-Forwarded-For`, `-Host`
   * and `-Proto` are believed; by default none, so a client cannot claim another host or scheme.
   */
  trustedProxies?: readonly string[];
  /** Timeouts, connection and JSON bounds (defaults: {@link DEFAULT_SERVER_LIMITS}). */
  limits?: Partial<ServerLimits>;
  /** Bounds of the event stream (defaults: {@link DEFAULT_STREAM_LIMITS}). */
  streams?: Partial<StreamLimits>;
  /** The built Studio served at `/studio` (`loadStudioFiles`); null answers 503 "not built". */
  studio?: StudioFiles | null;
  /** Serve HTTPS with this certificate chain and key (PEM); absent: plain HTTP. */
  tls?: ServerTls;
}

const REGISTERED = new WeakMap<FastifyInstance, readonly { method: string; url: string }[]>();

/**
 * Every route a server built by {@link buildServer} registered (`HEAD` beside each `GET` included),
 * as Fastify saw them: for the checks that the OpenAPI document and the access table cover them.
 */
export function registeredRoutes(app: FastifyInstance): readonly { method: string; url: string }[] {
  return REGISTERED.get(app) ?? [];
}

/** The REST API: a thin translation from HTTP to the parts, per DESIGN §9. */
export function buildServer(o: ServerOptions): FastifyInstance {
  const limits = { ...DEFAULT_SERVER_LIMITS, ...o.limits };
  const s = o.services;
  const app = Fastify({
    ...(o.logger ? { loggerInstance: o.logger } : { logger: false }),
    logController: new LogController({
      disableRequestLogging: !(o.logRequests ?? false),
      requestIdLogLabel: 'requestId',
    }),
    genReqId: o.requestIds ?? (() => randomUUID()),
    bodyLimit: o.bodyLimit ?? 1024 * 1024,
    trustProxy: o.trustedProxies?.length ? [...o.trustedProxies] : false,
    return503OnClosing: true,
    forceCloseConnections: true,
    serverFactory: limitedServerFactory(limits, () => s.metrics.connectionDropped(), o.tls),
    // A path Fastify's router cannot take (a bad escape, an over-long parameter) is answered in
    // our error shape like any other refusal.
    frameworkErrors: (err, _req, reply: FastifyReply) => {
      const { status, body } = errorBody(translateFastifyError(err, 'this gateway'));
      void reply.code(status).send(body);
    },
    // A request Node cannot even parse (headers too large, too slow, not HTTP) likewise.
    clientErrorHandler: answerClientError,
  });
  // Every route registered from here on, so the OpenAPI document can be checked against them.
  const registered: { method: string; url: string }[] = [];
  REGISTERED.set(app, registered);
  app.addHook('onRoute', (r) => {
    for (const method of [r.method].flat()) registered.push({ method, url: r.url });
  });
  app.addHook('preValidation', (req, _reply, done) => {
    done(nulCharacterIn(req.params, req.query));
  });
  const hub = new EventStreamHub({
    feed: s.events,
    limits: { ...DEFAULT_STREAM_LIMITS, ...o.streams },
    metrics: s.metrics,
    onError: (err) => app.log.error({ err }, 'event stream failed'),
  });
  const sends = new SendWatch(limits.sendTimeoutMs);
  s.metrics.countStreams(() => hub.size);
  app.addHook('onClose', (_app, done) => {
    hub.close();
    sends.close();
    done();
  });
  // With an authorization server, every 401 says where OAuth clients find it (RFC 9728).
  const challenge = s.oauth ? bearerChallenge(s.oauth.resource) : null;
  app.addHook('onSend', (_req, reply, payload, done) => {
    if (challenge !== null && reply.statusCode === 401)
      void reply.header('www-authenticate', challenge);
    sends.watch(reply.raw, payload);
    done(null, payload);
  });
  app.addHook('onResponse', (_req, reply, done) => {
    sends.done(reply.raw);
    done();
  });
  const routes: Route[] = [
    ...registryRoutes(s),
    ...openApiImportRoutes(s),
    ...invocationRoutes(s),
    ...evidenceRoutes(s),
    ...policyRoutes(s),
    ...approvalRoutes(s),
    ...uncertainRoutes(s),
    ...eventStreamRoutes(hub, s.directory),
    ...principalRoutes(s),
    ...tokenRoutes(s),
    ...(s.secrets ? secretRoutes({ secrets: s.secrets }) : []),
    ...(s.mcp
      ? mcpServerRoutes({
          mcp: s.mcp,
          publish: (tenant, events, actor) => s.registry.applyEvents(tenant, events, actor),
          checkPublish: (tenant, events, actor) => s.registry.checkEvents(tenant, events, actor),
        })
      : []),
    ...sessionRoutes(s),
    ...studioRoutes(o.studio ?? null, (req) => sessionOf(s, req) !== undefined),
    ...operationalRoutes(s, () => openapi),
    ...oauthRoutes(s),
  ];
  const openapi = openApiDocument([...routes, ...MCP_ENDPOINT_ROUTES], o.version);

  installBodyParsers(app, { maxJsonDepth: limits.maxJsonDepth });
  refuseEncodedBodies(app);
  void app.register(fastifyCookie);
  observeRequests(app);
  const tracer = o.tracer ?? noopTracer();

  for (const route of routes) {
    const key = `${route.method} ${route.url}`;
    const access = accessOf(route.method, route.url);
    if (!access)
      throw new IllegalStateError(
        `Route ${key} is not in the access table: add it to ACCESS in src/http/access-table.ts.`,
      );
    // The API's routes take only the query parameters they declare; the Studio's files and the
    // probes ignore queries (a browser or a monitor may add its own).
    const queryChecked = route.url.startsWith('/v1/');
    const declaredQuery = Object.keys(route.query ?? {});
    app.route({
      method: route.method,
      url: route.url,
      handler: async (req: FastifyRequest, reply: FastifyReply) => {
        const serve = async () => {
          // Without a bearer token, a Studio session cookie names the caller (its writes carry
          // the session's CSRF token); the access table decides for it as for a token.
          const { principal, grant } =
            access.roles !== 'public' &&
            req.headers.authorization === undefined &&
            hasSessionCookie(req)
              ? grantFor(key, access, sessionPrincipal(s, req), null)
              : await authorize(s.directory, key, access, req.headers.authorization, {
                  ...(s.oauth ? { oauth: s.oauth } : {}),
                });
          if (queryChecked) {
            const undeclared = undeclaredQueryParameter(req.query, declaredQuery, key);
            if (undeclared) throw undeclared;
          }
          const answer = await route.handler(principal, req, reply, grant);
          if (answer === null) return reply;
          void reply.code(answer.status);
          if (answer.contentType) void reply.type(answer.contentType);
          return answer.body;
        };
        // Probes and scrapes (the public routes) are not traced: they would drown the calls.
        return access.roles === 'public'
          ? serve()
          : traceRoute(tracer, route.url, req, reply, serve);
      },
    });
  }

  // A session's GET /mcp stream is bounded like an event stream, unless set apart.
  const streamBufferBytes = o.mcp?.streamBufferBytes ?? o.streams?.bufferBytes;
  mountMcpEndpoint(app, s, {
    ...o.mcp,
    ...(streamBufferBytes !== undefined ? { streamBufferBytes } : {}),
    version: o.version,
    events: (listener) => hub.listen(listener),
  });

  // A route added without its description or its access is a bug: the gateway refuses to start.
  app.addHook('onReady', (done) => {
    const missing = undocumentedRoutes(openapi, registered);
    const unguarded = registered
      .filter((r) => !accessOf(r.method, r.url))
      .map((r) => `${r.method} ${r.url}`);
    done(
      missing.length > 0
        ? new IllegalStateError(
            `Routes missing from /openapi.json: ${missing.join(', ')}. Describe them in the route table (or MCP_ENDPOINT_ROUTES in src/http/openapi.ts).`,
          )
        : unguarded.length > 0
          ? new IllegalStateError(
              `Routes missing from the access table: ${unguarded.join(', ')}. Add them to ACCESS in src/http/access-table.ts.`,
            )
          : undefined,
    );
  });

  app.setNotFoundHandler((req, reply) => {
    const path = req.url.split('?')[0] ?? '';
    // A path the gateway serves, asked with another method: 405 with the methods it has (an
    // OPTIONS request asks for just that list), never a 404 that says the path is not there.
    const allow = allowedMethods(registered, path);
    if (allow.length > 0) {
      void reply.header('allow', allow.join(', '));
      if (req.method === 'OPTIONS') return void reply.code(204).send();
      const { status, body } = errorBody(
        new GatehouseError(
          ErrorCode.METHOD_NOT_ALLOWED,
          `${cutText(path, 200)} does not take ${req.method}; it takes ${allow.join(', ')} (see /openapi.json).`,
          { details: { method: req.method, allow } },
        ),
      );
      return void reply.code(status).send(body);
    }
    void reply.code(404).send({
      error: {
        code: ErrorCode.NOT_FOUND,
        message: `No route ${req.method} ${cutText(path, 200)}; see /openapi.json.`,
        details: {},
      },
    });
  });
  app.setErrorHandler((err: unknown, req, reply) => {
    const translated = translateFastifyError(err, 'this gateway');
    const { status, body } = errorBody(translated);
    if (status >= 500) {
      // The answer names the request id, so its log line (with the cause) can be found.
      req.log.error({ err }, 'request failed');
      body.error.message = `${body.error.message} (request id ${req.id})`;
      body.error.details = { ...body.error.details, requestId: req.id };
    }
    void reply.code(status).send(body);
  });
  return app;
}
