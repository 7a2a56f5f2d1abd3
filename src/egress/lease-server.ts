import { createServer, request as httpRequest } from 'node:http';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import { ResourceLifecycle, exactOrigin } from '../core/index.js';
import type { EgressAllowList } from './allow-list.js';
import { authorizeEgress } from './authorize.js';
import type { EgressResolver } from './authorize.js';
import type { EgressDecision } from './decision.js';
import {
  connectFirst,
  downstreamHeaders,
  hostHeader,
  EGRESS_ANSWER_HEADER,
  rawResponse,
  upstreamHeaders,
} from './forward.js';
import { compressedAnswer, scrubBody, scrubHeaders } from './response-scrub.js';
import type { ResponseScrub } from './response-scrub.js';
import { parseConnectTarget, parseHttpTarget } from './target.js';
import type { EgressTarget } from './target.js';

/** Bounds of one lease's proxy endpoint. */
export interface EgressLimits {
  /** Largest request head (request line plus headers) accepted; larger is answered 431. */
  maxHeaderBytes: number;
  /** A tunnel or request with no traffic either way for this long is ended. */
  idleTimeoutMs: number;
  /** Bound on a DNS lookup and on each upstream connection attempt. */
  connectTimeoutMs: number;
  /** Concurrent client connections to this lease's endpoint. */
  maxConnections: number;
}

/** What a lease's proxy endpoint needs. */
interface EgressLeaseServerOptions {
  socketPath: string;
  allowList: EgressAllowList;
  resolve: EgressResolver;
  now: () => number;
  limits: EgressLimits;
  /** Told of every decision, in the order they are made. */
  record: (decision: Omit<EgressDecision, 'at'> & { at: number }) => void;
  /**
   * Headers added to a plain-HTTP request, given its exact origin (`http://host:port`, see
   * `exactOrigin`); they replace any of the same name.
   */
  injectHeaders?: (origin: string) => Record<string, string>;
  /** Applied to the answers of requests that got injected headers (see {@link ResponseScrub}). */
  scrub?: ResponseScrub;
}

/**
 * The HTTP proxy of one lease, listening on a Unix socket: CONNECT tunnels and absolute-form
 * plain-HTTP requests, each judged by {@link authorizeEgress} and connected only to the addresses
 * it checked. Request heads and bodies pass through but are never recorded.
 */
export class EgressLeaseServer {
  private readonly server: Server;
  /** Every client and upstream socket, so close() can end open tunnels. */
  private readonly sockets = new Set<Socket>();
  private readonly state = new ResourceLifecycle('the egress lease server');

  private constructor(private readonly options: EgressLeaseServerOptions) {
    const { limits } = options;
    this.server = createServer({ maxHeaderSize: limits.maxHeaderBytes });
    this.server.maxConnections = limits.maxConnections;
    this.server.headersTimeout = Math.min(limits.idleTimeoutMs, 30_000);
    this.server.requestTimeout = 0;
    this.server.keepAliveTimeout = 5_000;
    this.server.setTimeout(limits.idleTimeoutMs);
    this.server.on('connection', (socket: Socket) => this.track(socket));
    this.server.on('connect', (req: IncomingMessage, socket: Duplex, head: Buffer) => {
      void this.tunnel(req, socket as Socket, head);
    });
    this.server.on('request', (req: IncomingMessage, res: ServerResponse) => {
      void this.forward(req, res);
    });
    this.server.on('upgrade', (req: IncomingMessage, socket: Duplex) => {
      this.refuseRaw(
        socket,
        req.method ?? '',
        400,
        'protocol upgrades are not proxied; use CONNECT',
      );
    });
    this.server.on('clientError', (err: Error & { code?: string }, socket: Duplex) => {
      const overflow = err.code === 'HPE_HEADER_OVERFLOW';
      if (err.code?.startsWith('HPE_') === true) {
        const why = overflow
          ? `request head larger than ${limits.maxHeaderBytes} bytes`
          : `malformed HTTP request (${err.code})`;
        this.refuseRaw(socket, '', overflow ? 431 : 400, why);
      } else {
        socket.destroy();
      }
    });
  }

  /**
   * Starts listening at `socketPath` (which must not exist).
   * @throws the listen error (`EADDRINUSE`, `EACCES`, …).
   */
  static async listen(options: EgressLeaseServerOptions): Promise<EgressLeaseServer> {
    const lease = new EgressLeaseServer(options);
    await new Promise<void>((resolve, reject) => {
      lease.server.once('error', reject);
      lease.server.listen(options.socketPath, () => {
        lease.server.removeListener('error', reject);
        resolve();
      });
    });
    return lease;
  }

  /** Stops listening, ends every open connection and tunnel. Safe to call twice. */
  close(): Promise<void> {
    return this.state.close(
      () =>
        new Promise<void>((resolve) => {
          this.server.close(() => resolve());
          for (const socket of this.sockets) socket.destroy();
        }),
    );
  }

  private track(socket: Socket): void {
    if (!this.state.isOpen) {
      socket.destroy();
      return;
    }
    this.sockets.add(socket);
    // Errors end the socket; 'close' does the bookkeeping.
    socket.on('error', () => {});
    socket.once('close', () => this.sockets.delete(socket));
  }

  private async tunnel(req: IncomingMessage, client: Socket, head: Buffer): Promise<void> {
    const at = this.options.now();
    client.setTimeout(this.options.limits.idleTimeoutMs, () => client.destroy());
    const parsed = parseConnectTarget(req.url ?? '');
    if (!parsed.ok) {
      this.refuseRaw(client, 'CONNECT', 400, parsed.reason, at);
      return;
    }
    const target = parsed.target;
    const auth = await this.authorize(target);
    if (!auth.allowed) {
      this.refuseRaw(client, 'CONNECT', auth.status, auth.reason, at, target);
      return;
    }
    const conn = await connectFirst(
      auth.addresses,
      target.port,
      this.limits.connectTimeoutMs,
      (s) => this.track(s),
    );
    if (!conn.ok) {
      this.record(at, 'CONNECT', target, true, connectFailed(auth.entry, conn.why));
      client.end(rawResponse(502, `could not connect to ${target.host}:${target.port}`));
      return;
    }
    const upstream = conn.socket;
    this.record(at, 'CONNECT', target, true, allowedBy(auth.entry), conn.address);
    if (client.destroyed || !this.state.isOpen) {
      upstream.destroy();
      return;
    }
    upstream.setTimeout(this.limits.idleTimeoutMs, () => upstream.destroy());
    upstream.once('close', () => client.destroy());
    client.once('close', () => upstream.destroy());
    client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
    if (head.length > 0) upstream.write(head);
    client.pipe(upstream);
    upstream.pipe(client);
  }

  private async forward(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const at = this.options.now();
    const method = req.method ?? '';
    const parsed = parseHttpTarget(req.url ?? '');
    if (!parsed.ok) {
      this.record(at, method, undefined, false, parsed.reason);
      reply(res, 400, parsed.reason);
      return;
    }
    const target = parsed.target;
    const auth = await this.authorize(target);
    if (!auth.allowed) {
      this.record(at, method, target, false, auth.reason);
      reply(res, auth.status, auth.reason);
      return;
    }
    const conn = await connectFirst(
      auth.addresses,
      target.port,
      this.limits.connectTimeoutMs,
      (s) => this.track(s),
    );
    if (!conn.ok) {
      this.record(at, method, target, true, connectFailed(auth.entry, conn.why));
      reply(res, 502, `could not connect to ${target.host}:${target.port}`);
      return;
    }
    this.record(at, method, target, true, allowedBy(auth.entry), conn.address);
    const socket = conn.socket;
    const inject = this.options.injectHeaders?.(httpOrigin(target)) ?? {};
    // An answer to a request carrying a credential is scrubbed of it: asked for uncompressed.
    const scrub = Object.keys(inject).length > 0 ? this.options.scrub : undefined;
    const headers = upstreamHeaders(
      req.headersDistinct,
      hostHeader(target.host, target.port),
      inject,
    );
    if (scrub) headers['accept-encoding'] = 'identity';
    const upstream = httpRequest({
      method,
      path: target.path,
      headers,
      setHost: false,
      createConnection: () => socket,
    });
    upstream.setTimeout(this.limits.idleTimeoutMs, () => upstream.destroy());
    upstream.on('error', () => {
      if (!res.headersSent) reply(res, 502, `connection to ${target.host}:${target.port} failed`);
      else res.destroy();
    });
    upstream.on('response', (response) => {
      const withheld = scrub ? compressedAnswer(response.headers['content-encoding']) : null;
      if (withheld !== null) {
        response.destroy();
        reply(res, 502, withheld);
        return;
      }
      const down = downstreamHeaders(response.headers);
      res.writeHead(
        response.statusCode ?? 502,
        scrub ? scrub.text(response.statusMessage ?? '') : response.statusMessage,
        scrub ? scrubHeaders(down, scrub) : down,
      );
      (scrub ? response.pipe(scrubBody(scrub)) : response).pipe(res);
      response.on('error', () => res.destroy());
    });
    res.on('close', () => {
      if (!res.writableFinished) upstream.destroy();
      socket.destroy();
    });
    req.pipe(upstream);
  }

  private get limits(): EgressLimits {
    return this.options.limits;
  }

  private authorize(target: EgressTarget): ReturnType<typeof authorizeEgress> {
    return authorizeEgress(
      this.options.allowList,
      target,
      this.options.resolve,
      this.limits.connectTimeoutMs,
    );
  }

  private refuseRaw(
    socket: Duplex,
    method: string,
    status: number,
    reason: string,
    at: number = this.options.now(),
    target?: EgressTarget,
  ): void {
    this.record(at, method, target, false, reason);
    if (socket.writable) socket.end(rawResponse(status, reason));
    else socket.destroy();
  }

  private record(
    at: number,
    method: string,
    target: EgressTarget | undefined,
    allowed: boolean,
    reason: string,
    address?: string,
  ): void {
    this.options.record({
      at,
      method,
      host: target?.host ?? '',
      port: target?.port ?? 0,
      allowed,
      reason,
      ...(address === undefined ? {} : { address }),
    });
  }
}

/**
 * The exact origin of a plain-HTTP target: always `http:`, since the proxy forwards only
 * cleartext requests (TLS is tunnelled with CONNECT and never touched), with its port.
 */
function httpOrigin(target: EgressTarget): string {
  return exactOrigin(`http://${hostHeader(target.host, target.port)}`) ?? '';
}

function reply(res: ServerResponse, status: number, text: string): void {
  const body = `${text}\n`;
  res.writeHead(status, {
    'content-type': 'text/plain; charset=utf-8',
    'content-length': Buffer.byteLength(body),
    [EGRESS_ANSWER_HEADER.toLowerCase()]: String(status),
    // After a malformed request the connection's framing cannot be trusted.
    ...(status === 400 ? { connection: 'close' } : {}),
  });
  res.end(body);
}

function allowedBy(entry: string): string {
  return `allowed by egress allow-list entry "${entry}"`;
}

function connectFailed(entry: string, why: string): string {
  return `${allowedBy(entry)}, but the connection failed (${why})`;
}
