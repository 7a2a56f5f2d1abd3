import { createServer } from 'node:http';
import type { IncomingMessage, RequestListener, Server, ServerResponse } from 'node:http';
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

/**
 * A Fastify `serverFactory` that makes Node HTTP servers with these limits (every server Fastify
 * makes, including the second one it opens for `localhost`). Node checks the header and request
 * timers at `connectionsCheckingInterval`; it is set to a fraction of the shorter one so a stalled
 * client is cut close to its deadline rather than up to 30 s late.
 */
export function limitedServerFactory(
  limits: ServerLimits,
  onDrop?: () => void,
): (handler: RequestListener<typeof IncomingMessage, typeof ServerResponse>) => Server {
  const headersTimeout = Math.min(limits.headersTimeoutMs, limits.requestTimeoutMs || Infinity);
  const shortest = Math.min(headersTimeout || Infinity, limits.requestTimeoutMs || Infinity);
  return (handler) => {
    const server = createServer(
      {
        headersTimeout,
        requestTimeout: limits.requestTimeoutMs,
        keepAliveTimeout: limits.keepAliveTimeoutMs,
        connectionsCheckingInterval: Number.isFinite(shortest)
          ? Math.max(250, Math.min(30_000, Math.floor(shortest / 4)))
          : 30_000,
      },
      handler,
    );
    server.maxConnections = limits.maxConnections;
    if (onDrop) server.on('drop', onDrop);
    if (limits.maxRequestsPerSocket > 0) server.maxRequestsPerSocket = limits.maxRequestsPerSocket;
    return server;
  };
}

/**
 * Arms the send timeout for one answer about to be written: until it is finished, the connection
 * is closed when `ms` pass without any of its bytes leaving for the kernel (the client stopped
 * reading). Not for streamed payloads, which may rightly pause, nor for in-process requests.
 * A timer of its own, not the socket's: Node uses that one for keep-alive.
 */
export function armSendTimeout(res: ServerResponse, payload: unknown, ms: number): void {
  const socket = res.socket;
  if (ms <= 0 || !(socket instanceof Socket) || payload instanceof Readable) return;
  // Bytes libuv still holds for the kernel (an internal of net.Socket, stable since Node 0.x).
  const queued = () =>
    (socket as unknown as { _handle?: { writeQueueSize?: number } })._handle?.writeQueueSize ?? 0;
  // Bytes handed to libuv less those it still holds: they grow only as the client reads.
  const progress = () => socket.bytesWritten - queued();
  let last = progress();
  const timer = setInterval(() => {
    const now = progress();
    if (now === last && res.writableLength + queued() > 0) socket.destroy();
    last = now;
  }, ms);
  timer.unref();
  const stop = () => clearInterval(timer);
  res.once('finish', stop);
  res.once('close', stop);
}
