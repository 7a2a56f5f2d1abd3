import { randomUUID } from 'node:crypto';
import { Readable } from 'node:stream';
import type { ReadableStream as NodeReadableStream } from 'node:stream/web';
import {
  WebStandardStreamableHTTPServerTransport,
  isInitializeRequest,
} from '@modelcontextprotocol/server';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { ErrorCode, GatehouseError } from '../../core/index.js';
import type { StoredEvent } from '../../core/index.js';
import type { Principal } from '../../tenancy/index.js';
import type { Grant } from '../access.js';
import { jsonRpcRefusal } from './errors.js';
import { translateFastifyError } from '../fastify-errors.js';
import { authenticateAgent, checkHost, checkOrigin } from './guards.js';
import type { McpReach } from './guards.js';
import type { McpWatcher } from '../../mcp/index.js';
import { RefusalType, recordRefusal, sessionDigest } from './refusals.js';
import { createSessionServer } from './session.js';
import { initializeProblem, messageProblem } from './messages.js';
import { LiveSessions } from './live-sessions.js';
import { serveSessionStream } from './session-stream.js';
import { MemoryStreamEventStore } from './memory-stream-events.js';
import { sessionEventStore } from './session-events.js';
import type { McpStreamLimits } from '../../tenancy/index.js';
import { DEFAULT_STREAM_LIMITS } from '../event-stream-limits.js';
import type { GatewayServices } from '../services.js';

/** Options of {@link mountMcpEndpoint}. */
export interface McpEndpointOptions extends McpReach {
  /** Largest accepted request body in bytes (default 1 MiB). */
  bodyLimit?: number;
  /** Sessions one agent may hold; opening another closes its least recently used (default 16). */
  maxSessionsPerPrincipal?: number;
  /**
   * Bytes a session's `GET /mcp` stream may leave unread in the gateway; a reader further behind
   * is closed (default: the event stream's bound, 256 KiB).
   */
  streamBufferBytes?: number;
  /**
   * What each session keeps of its streams for `Last-Event-ID` replay, when the events stay in
   * this node's memory (no shared store); default `DEFAULT_MCP_STREAM_LIMITS`.
   */
  streamLimits?: McpStreamLimits;
  /** The `retry` (ms) a stream's priming event asks a client to wait before resuming (1000). */
  streamRetryMs?: number;
}

/** A session's transport (named for the type it must be given where it refers to itself). */
type SessionTransport = WebStandardStreamableHTTPServerTransport;

interface Session {
  principal: string;
  /** The token it was opened with: the session ends when that token stops working. */
  token: string;
  transport: WebStandardStreamableHTTPServerTransport;
  /** Stops watching the token. */
  unwatch: () => void;
  /** Takes it out of this node's notifications. */
  forget: () => void;
}

/** Only these request headers reach the MCP transport; the client's token never goes further. */
const FORWARDED = [
  'accept',
  'content-type',
  'mcp-session-id',
  'mcp-protocol-version',
  'last-event-id',
];

/**
 * `POST /mcp` (and `DELETE /mcp` to end a session, `GET /mcp` for its stream of notifications):
 * the agents' MCP endpoint over Streamable HTTP.
 * Host, Origin and the agent's bearer token are checked before the body is read; each session is
 * bound to the agent and the token that opened it, and a request with another principal's (or
 * another token's) session id is answered as if the session did not exist. A session is closed as
 * soon as its token is revoked, rotated out or expires.
 */
export function mountMcpEndpoint(
  app: FastifyInstance,
  s: GatewayServices,
  o: McpEndpointOptions & {
    version: string;
    /** Follows the outbox: the event stream hub's shared read (see `EventStreamHub.listen`). */
    events: (listener: (e: StoredEvent) => void) => () => void;
  },
): void {
  const sessions = new Map<string, Session>();
  const principals = new WeakMap<FastifyRequest, { principal: Principal; grant: Grant }>();
  const maxSessions = o.maxSessionsPerPrincipal ?? 16;

  const shared = s.mcpSessions;
  // The streams' events for replay: in the database beside the sessions when nodes share them (a
  // client's `GET` with Last-Event-ID may land on another node), else in this node's memory.
  const streamEvents = s.mcpStreamEvents ?? new MemoryStreamEventStore(o.streamLimits);
  /** Sessions of other nodes being opened again here, so two requests open one. */
  const reviving = new Map<string, Promise<void>>();

  const live = new LiveSessions({
    events: o.events,
    subscribe: async (tenant, serverId, uri, on) => {
      await s.mcp!.readUpstream(tenant, serverId, async (c, t) => {
        if (c.offersSubscriptions) return c.subscribeResource(uri, on, t);
        if (on)
          throw new GatehouseError(
            ErrorCode.INVALID_INPUT,
            `MCP server ${serverId} does not offer resource subscriptions; read ${uri} again instead.`,
          );
      });
    },
    setLevel: (tenant, serverId, level) =>
      s.mcp!.readUpstream(tenant, serverId, (c, t) => c.setLoggingLevel(level, t)),
    ...(s.mcp ? { watchUpstreams: (w: McpWatcher) => s.mcp!.watch(w) } : {}),
    onError: (err, what) => app.log.warn({ err }, `MCP notifications: ${what} failed`),
  });
  const bufferBytes = o.streamBufferBytes ?? DEFAULT_STREAM_LIMITS.bufferBytes;

  const counted = () => s.metrics.mcpSessionsOpen(sessions.size);
  /** Ends a session here and, unless only this node lets go of it (`everywhere` false), for all. */
  const end = async (id: string, x: Session, everywhere = true): Promise<void> => {
    if (sessions.get(id) === x) sessions.delete(id);
    counted();
    x.unwatch();
    x.forget();
    await x.transport.close();
    if (everywhere) await shared?.delete(id);
    if (everywhere || !s.mcpStreamEvents) await streamEvents.drop(id);
  };

  // A node that stops lets go of its sessions; they stay open for the other nodes.
  app.addHook('onClose', async () => {
    live.close();
    await Promise.allSettled([...sessions.entries()].map(([id, x]) => end(id, x, false)));
    sessions.clear();
  });

  /**
   * Opens a session's transport and server: a new one (for an `initialize` whose params are
   * `initialize`), or, given `reopen`, one another node opened, under its id.
   */
  const open = async (
    principal: Principal,
    grantToken: { id: string; expiresAt: string },
    initialize: unknown,
    reopen?: string,
  ): Promise<WebStandardStreamableHTTPServerTransport> => {
    const token = grantToken.id;
    const mine = [...sessions.entries()].filter(([, x]) => x.principal === principal.id);
    for (const [id, x] of mine.slice(0, Math.max(0, mine.length - maxSessions + 1))) {
      await end(id, x, reopen === undefined);
    }
    const transport: SessionTransport = new WebStandardStreamableHTTPServerTransport({
      sessionIdGenerator: () => reopen ?? randomUUID(),
      // Answers come as event streams, so a call's progress (and a server's requests) can precede
      // its result on the request's own stream.
      enableJsonResponse: false,
      // Resumable streams: each event gets an id and is kept a while; clients of 2025-11-25 and
      // later also get a priming event (id, retry) first, so they can resume before any message.
      eventStore: sessionEventStore(
        streamEvents,
        (): string | undefined => transport.sessionId,
        (err) => app.log.warn({ err }, 'MCP stream event not kept for replay'),
      ),
      retryInterval: o.streamRetryMs ?? 1000,
      onsessioninitialized: async (id) => {
        const session: Session = {
          principal: principal.id,
          token,
          transport,
          unwatch: () => {},
          forget: live.add(made.live),
        };
        session.unwatch = s.directory.tokens.watch(
          token,
          () => void end(id, session),
          Date.parse(grantToken.expiresAt),
        );
        sessions.set(id, session);
        counted();
        await shared?.put({
          id,
          tenant: principal.tenant,
          principal: principal.id,
          tokenId: token,
          initialize,
          createdAt: new Date().toISOString(),
        });
      },
      onsessionclosed: async (id) => {
        const x = sessions.get(id);
        if (x) {
          sessions.delete(id);
          counted();
          x.unwatch();
          x.forget();
        }
        await shared?.delete(id);
        await streamEvents.drop(id);
      },
    });
    const made = createSessionServer({
      services: s,
      principal,
      sessionId: () => transport.sessionId,
      version: o.version,
      log: app.log,
      live,
    });
    const server = made.server;
    await server.connect(transport);
    server.onclose = () => {
      const id = transport.sessionId;
      const x = id === undefined ? undefined : sessions.get(id);
      if (id !== undefined && x) {
        sessions.delete(id);
        counted();
        x.unwatch();
        x.forget();
      }
    };
    return transport;
  };

  /**
   * The session `id` as the shared store has it: ended here too when another node ended it, and
   * opened here (its client's `initialize` replayed) when it was opened on another node by this
   * principal with this token. A session of someone else is returned as it is, to be refused.
   */
  const sharedSession = async (
    id: string,
    principal: Principal,
    grantToken: { id: string; expiresAt: string },
  ): Promise<Session | undefined> => {
    const stored = await shared!.get(id);
    const here = sessions.get(id);
    if (!stored) {
      if (here) await end(id, here, false);
      return undefined;
    }
    if (here) return here;
    if (stored.principal !== principal.id || stored.tokenId !== grantToken.id) {
      return { principal: stored.principal, token: stored.tokenId } as Session;
    }
    let opening = reviving.get(id);
    if (!opening) {
      opening = reopen(stored.id, stored.initialize, principal, grantToken).finally(() =>
        reviving.delete(id),
      );
      reviving.set(id, opening);
    }
    await opening;
    return sessions.get(id);
  };

  /** Opens here a session another node opened: its client's initialize and initialized again. */
  const reopen = async (
    id: string,
    initialize: unknown,
    principal: Principal,
    grantToken: { id: string; expiresAt: string },
  ): Promise<void> => {
    const transport = await open(principal, grantToken, initialize, id);
    const headers = {
      accept: 'application/json, text/event-stream',
      'content-type': 'application/json',
    };
    const replay = (body: unknown, session?: string) =>
      transport.handleRequest(
        new Request('http://gatehouse.invalid/mcp', {
          method: 'POST',
          headers: session ? { ...headers, 'mcp-session-id': session } : headers,
        }),
        { parsedBody: body },
      );
    const answer = await replay({
      jsonrpc: '2.0',
      id: 0,
      method: 'initialize',
      params: initialize,
    });
    if (!answer.ok) throw new Error(`reopening MCP session failed: HTTP ${answer.status}`);
    await replay({ jsonrpc: '2.0', method: 'notifications/initialized' }, id);
  };

  const handler = async (req: FastifyRequest, reply: FastifyReply) => {
    const { principal, grant } = principals.get(req)!;
    const token = grant.token!.id;
    const sessionId = req.headers['mcp-session-id'];
    if (req.method === 'POST') {
      const problem = messageProblem(req.body);
      if (problem) throw problem;
    }
    let transport: WebStandardStreamableHTTPServerTransport;
    if (typeof sessionId === 'string') {
      const session = shared
        ? await sharedSession(sessionId, principal, grant.token!)
        : sessions.get(sessionId);
      if (!session || session.principal !== principal.id || session.token !== token) {
        // The answer is the same either way; the record tells an ended session from another
        // agent's (an attempt to take it over).
        throw new GatehouseError(
          ErrorCode.NOT_FOUND,
          'Session not found: it ended or was never yours. Send initialize without Mcp-Session-Id to open one.',
          {
            details: {
              reason: session ? 'foreign-session' : 'unknown-session',
              sessionSha256: sessionDigest(sessionId),
            },
          },
        );
      }
      // Most recently used last, so the oldest is closed first when an agent opens too many.
      sessions.delete(sessionId);
      sessions.set(sessionId, session);
      transport = session.transport;
    } else {
      // A malformed initialize (an id-less one included, which the SDK would take and answer
      // 202 with no session a client can see) is told what it lacks.
      const problem = req.method === 'POST' ? initializeProblem(req.body) : undefined;
      if (problem) throw problem;
      if (req.method !== 'POST' || !isInitializeRequest(req.body))
        throw new GatehouseError(
          ErrorCode.INVALID_INPUT,
          'Header Mcp-Session-Id is required: open a session with an initialize request first.',
        );
      transport = await open(principal, grant.token!, (req.body as { params?: unknown }).params);
    }
    const headers = new Headers();
    for (const name of FORWARDED) {
      const v = req.headers[name];
      if (typeof v === 'string') headers.set(name, v);
    }
    const answer = await transport.handleRequest(
      new Request(`http://gatehouse.invalid${req.url}`, { method: req.method, headers }),
      req.method === 'POST' ? { parsedBody: req.body } : {},
    );
    const stream = answer.headers.get('content-type')?.startsWith('text/event-stream') === true;
    if (req.method === 'GET' && answer.ok && stream && answer.body)
      return serveSessionStream(reply, answer, bufferBytes, () =>
        req.log.warn('MCP session stream closed: its reader fell too far behind'),
      );
    void reply.code(answer.status);
    answer.headers.forEach((value, name) => void reply.header(name, value));
    if (!answer.body) return reply.send();
    if (stream) {
      return reply.send(Readable.fromWeb(answer.body as NodeReadableStream<Uint8Array>));
    }
    return reply.send(await answer.text());
  };

  app.route({
    method: ['GET', 'POST', 'DELETE'],
    url: '/mcp',
    bodyLimit: o.bodyLimit ?? 1024 * 1024,
    onRequest: async (req) => {
      checkHost(req, o);
      checkOrigin(req, o);
      principals.set(req, await authenticateAgent(s, req.method, req.headers.authorization));
    },
    handler,
    // Answered once the refusal is recorded (recordRefusal never throws).
    errorHandler: (err, req, reply) => void refuse(err, req, reply),
  });

  const refuse = async (err: unknown, req: FastifyRequest, reply: FastifyReply): Promise<void> => {
    const refusal = translateFastifyError(err, '/mcp');
    const { status, body } = jsonRpcRefusal(refusal);
    if (status >= 500) req.log.error({ err }, 'MCP request failed');
    else {
      // Details stay in the record; the client sees only the code and message.
      const { reason, ...data } = refusal instanceof GatehouseError ? refusal.details : {};
      await recordRefusal(s, req.log, principals.get(req)?.principal, RefusalType.request, {
        code: body.error.data.code,
        reason: typeof reason === 'string' ? reason : reasonOf(body.error.data.code),
        message: body.error.message,
        data: { method: req.method, ...data },
      });
    }
    if (status === 401) void reply.header('www-authenticate', 'Bearer realm="gatehouse"');
    void reply.code(status).send(body);
  };
}

/** The refusal's stable word for an error code at the edge. */
function reasonOf(code: ErrorCode): string {
  switch (code) {
    case ErrorCode.PAYLOAD_TOO_LARGE:
      return 'body-too-large';
    case ErrorCode.UNAUTHENTICATED:
      return 'unauthenticated';
    case ErrorCode.FORBIDDEN:
      return 'forbidden';
    default:
      return 'invalid-request';
  }
}
