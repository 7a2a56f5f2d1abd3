import { createServer } from 'node:http';
import type { IncomingMessage, RequestListener, Server, ServerResponse } from 'node:http';
import { createServer as createTlsServer } from 'node:https';
import { Socket } from 'node:net';
import { Readable } from 'node:stream';
import { DEFAULT_MAX_JSON_DEPTH } from '../core/index.js';

/**
 * The bounds every connection and request meets before any route runs. Time limits end what a
 * client leaves unfinished; none of them applies to an answer being streamed (the event stream,
 * an MCP answer), which has its own bounds.
 */
export interface ServerLimits {
  /** A request's headers and body must have arrived this long after it began (Node answers 408). */
  requestTimeoutMs: number;
  /** Its headers must have arrived this long after the connection opened or the last answer. */
  headersTimeoutMs: number;
  /** An idle keep-alive connection is closed after this long without a new request. */
  keepAliveTimeoutMs: number;
  /** Open connections at most; further ones are closed as they arrive. */
  maxConnections: number;
  /** Requests served on one connection before it is closed (0: no limit). */
  maxRequestsPerSocket: number;
  /** How deep objects and arrays may nest in a JSON body. */
  maxJsonDepth: number;
  /**
   * An answer the client stops reading is cut after this long without a byte taken (0: never),
   * so a client cannot park large answers in the gateway's memory. Streams have their own bound.
   */
  sendTimeoutMs: number;
}

/** The defaults: generous for any real client, short for one that stalls. */
export const DEFAULT_SERVER_LIMITS: ServerLimits = {
  requestTimeoutMs: 30_000,
  headersTimeoutMs: 10_000,
  keepAliveTimeoutMs: 5_000,
  maxConnections: 512,
  maxRequestsPerSocket: 0,
  maxJsonDepth: DEFAULT_MAX_JSON_DEPTH,
  sendTimeoutMs: 30_000,
};

/** A certificate chain and its private key (PEM) the server presents. */
export interface ServerTls {
  cert: Buffer;
  key: Buffer;
}

/**
 * A Fastify `serverFactory` that makes Node HTTP (or, given `tls`, HTTPS) servers with these limits (every server Fastify
 * makes, including the second one it opens for `localhost`). Node checks the header and request
 * timers at `connectionsCheckingInterval`; it is set to a fraction of the shorter one so a stalled
 * client is cut close to its deadline rather than up to 30 s late.
 */
export function limitedServerFactory(
  limits: ServerLimits,
  onDrop?: () => void,
  tls?: ServerTls,
): (handler: RequestListener<typeof IncomingMessage, typeof ServerResponse>) => Server {
  const headersTimeout = Math.min(limits.headersTimeoutMs, limits.requestTimeoutMs || Infinity);
  const shortest = Math.min(headersTimeout || Infinity, limits.requestTimeoutMs || Infinity);
  return (handler) => {
    const options = {
      headersTimeout,
      requestTimeout: limits.requestTimeoutMs,
      keepAliveTimeout: limits.keepAliveTimeoutMs,
      connectionsCheckingInterval: Number.isFinite(shortest)
        ? Math.max(250, Math.min(30_000, Math.floor(shortest / 4)))
        : 30_000,
    };
    // An HTTPS server is an HTTP server over TLS: the same limits, the same handler.
    const server: Server = tls
      ? createTlsServer({ ...options, cert: tls.cert, key: tls.key }, handler)
      : createServer(options, handler);
    server.maxConnections = limits.maxConnections;
    if (onDrop) server.on('drop', onDrop);
    if (limits.maxRequestsPerSocket > 0) server.maxRequestsPerSocket = limits.maxRequestsPerSocket;
    return server;
  };
}

/**
 * The bytes a socket's kernel buffer has taken so far: handed to libuv less those libuv still
 * holds. They grow only as the client reads (once the kernel buffer is full), never when more is
 * merely queued in Node (unlike `bytesWritten`, which counts Node's queue too), and also while one
 * large write is partly taken (unlike `bytesWritten - writableLength`). Undefined-safe: a missing
 * socket has taken nothing. `_bytesDispatched` and `_handle.writeQueueSize` are internals of
 * net.Socket, stable since Node 0.x.
 */
export function socketProgress(socket: Socket | null | undefined): number {
  if (!socket) return 0;
  const s = socket as unknown as {
    _bytesDispatched?: number;
    _handle?: { writeQueueSize?: number } | null;
  };
  return (s._bytesDispatched ?? 0) - (s._handle?.writeQueueSize ?? 0);
}

/** An answer being sent: its socket, the progress last seen and since when it has not moved. */
interface Sending {
  socket: Socket;
  progress: number;
  since: number;
}

/**
 * The send timeout of one server: until an answer is finished, its connection is closed when
 * `ms` pass without any of its bytes leaving for the kernel (the client stopped reading). One
 * set of unfinished answers, checked by one timer that runs while the set is not empty. Not for
 * streamed payloads, which may rightly pause, nor for in-process requests. A timer of its own,
 * not the socket's: Node uses that one for keep-alive.
 */
export class SendWatch {
  private readonly sending = new Map<ServerResponse, Sending>();
  private timer: NodeJS.Timeout | null = null;

  /** @param ms the send timeout; 0 turns the watch off. */
  constructor(private readonly ms: number) {}

  /** Watches an answer about to be written with `payload`, until {@link done} or it ends. */
  watch(res: ServerResponse, payload: unknown): void {
    const socket = res.socket;
    if (this.ms <= 0 || !(socket instanceof Socket) || payload instanceof Readable) return;
    this.sending.set(res, { socket, progress: socketProgress(socket), since: Date.now() });
    if (this.timer === null) {
      this.timer = setInterval(() => this.check(), this.ms);
      this.timer.unref();
    }
  }

  /** The answer is finished (Fastify's `onResponse`). */
  done(res: ServerResponse): void {
    this.sending.delete(res);
  }

  /** Stops watching everything. Safe to call twice. */
  close(): void {
    this.sending.clear();
    this.stop();
  }

  private check(): void {
    const now = Date.now();
    for (const [res, w] of this.sending) {
      if (res.writableFinished || w.socket.destroyed) {
        this.sending.delete(res);
        continue;
      }
      const progress = socketProgress(w.socket);
      if (progress !== w.progress) {
        w.progress = progress;
        w.since = now;
      } else if (now - w.since >= this.ms && res.writableLength + queued(w.socket) > 0) {
        this.sending.delete(res);
        w.socket.destroy();
      }
    }
    if (this.sending.size === 0) this.stop();
  }

  private stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }
}

/** Bytes libuv still holds for the kernel. */
function queued(socket: Socket): number {
  return (
    (socket as unknown as { _handle?: { writeQueueSize?: number } | null })._handle
      ?.writeQueueSize ?? 0
  );
}
