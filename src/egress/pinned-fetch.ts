import { Agent as HttpAgent, request as httpRequest } from 'node:http';
import type { ClientRequest, IncomingMessage, OutgoingHttpHeaders } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import { isIP } from 'node:net';
import type { LookupFunction } from 'node:net';
import { Readable } from 'node:stream';

/** The fetch signature: a URL (or its text) and the Fetch standard's init. */
export type FetchFunction = (url: string | URL, init?: RequestInit) => Promise<Response>;

/** An address an upstream's host was authorized to reach. */
export interface PinnedAddress {
  address: string;
  family: 4 | 6;
}

/** Options of {@link pinnedFetch}. */
export interface PinnedFetchOptions {
  /** The upstream: requests may go to its origin (scheme, host and port) only. */
  origin: URL;
  /** The checked addresses of its host, in order of preference: the only ones ever connected to. */
  addresses: readonly PinnedAddress[];
  /** Certificates (PEM) to trust for an https upstream instead of the system's. */
  ca?: string | Buffer;
}

/** The fetch of one upstream connection, and how to end its sockets. */
export interface PinnedFetch {
  readonly fetch: FetchFunction;
  /** Destroys every socket, open streams included; later requests fail. Safe to repeat. */
  close(): void;
}

/**
 * A pinned fetch that failed at the socket. `sent` says whether the whole request (head and body)
 * had been handed to the connection first: a failure before that cannot have reached the upstream's
 * handler; one after it may have had an effect there.
 */
export class PinnedFetchError extends TypeError {
  constructor(
    message: string,
    readonly sent: boolean,
    options?: ErrorOptions,
  ) {
    super(message, options);
    this.name = 'PinnedFetchError';
  }
}

/** Statuses whose response has no body (the Fetch standard's null body statuses). */
const NULL_BODY = new Set([101, 103, 204, 205, 304]);

/** Request headers that describe one hop; the pinned fetch sets its own. */
const HOP_HEADERS = new Set([
  'host',
  'connection',
  'keep-alive',
  'transfer-encoding',
  'content-length',
  'upgrade',
  'te',
  'trailer',
  'proxy-connection',
  'accept-encoding',
]);

/**
 * A fetch for one upstream, on node:http(s), that connects only to the given addresses: its
 * `lookup` answers with them, so no second DNS answer can send a request elsewhere (DNS
 * rebinding), while the Host header and TLS (SNI and certificate check) keep the URL's name.
 * It refuses any URL outside the origin and never follows a redirect (a 3xx comes back as it is).
 * The response body streams (Server-Sent Events work); the request's `AbortSignal` ends the
 * request or its body at any point. Sockets are kept alive for this upstream only.
 * @throws TypeError when the origin is not http(s) or there is no address.
 */
export function pinnedFetch(options: PinnedFetchOptions): PinnedFetch {
  const origin = new URL(options.origin.href);
  const tls = origin.protocol === 'https:';
  if (!tls && origin.protocol !== 'http:')
    throw new TypeError(`a pinned fetch is for http(s) upstreams, not ${origin.protocol}`);
  if (options.addresses.length === 0)
    throw new TypeError(`no authorized address for ${origin.host}`);
  const addresses = options.addresses.map((a) => ({ address: a.address, family: a.family }));
  const lookup: LookupFunction = (_name, options, callback) => {
    const family = options.family === 4 || options.family === 6 ? options.family : 0;
    const usable = addresses.filter((a) => family === 0 || a.family === family);
    const first = usable[0];
    if (first === undefined) {
      const err: NodeJS.ErrnoException = new Error(
        `no authorized IPv${family} address for ${origin.hostname}`,
      );
      err.code = 'ENOTFOUND';
      callback(err, '', 0);
    } else if (options.all) callback(null, usable);
    else callback(null, first.address, first.family);
  };
  const agent = tls
    ? new HttpsAgent({
        keepAlive: true,
        lookup,
        ...(options.ca === undefined ? {} : { ca: options.ca }),
      })
    : new HttpAgent({ keepAlive: true, lookup });
  let closed = false;

  const fetch: FetchFunction = async (input, init) => {
    if (closed) throw new TypeError('fetch failed: the upstream connection is closed');
    const req = unsent(() => new Request(input, init));
    const url = new URL(req.url);
    if (url.origin !== origin.origin || url.username !== '' || url.password !== '')
      throw new TypeError(
        `fetch refused: ${url.origin} is not the authorized upstream ${origin.origin}`,
      );
    const signal = req.signal;
    const body = req.body === null ? null : Buffer.from(await req.arrayBuffer());
    if (signal.aborted) throw signal.reason;
    const headers: OutgoingHttpHeaders = {};
    req.headers.forEach((value, name) => {
      if (!HOP_HEADERS.has(name)) headers[name] = value;
    });
    headers.host = url.host;
    // The body is handed over as it comes; a compressed one would need decoding.
    headers['accept-encoding'] = 'identity';
    if (body !== null) headers['content-length'] = String(body.length);
    const hostname = url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname;
    const options = {
      hostname,
      port: url.port === '' ? (tls ? 443 : 80) : Number(url.port),
      method: req.method,
      path: `${url.pathname}${url.search}`,
      headers,
      agent,
      lookup,
      ...(tls && isIP(hostname) === 0 ? { servername: hostname } : {}),
    };
    return new Promise<Response>((resolve, reject) => {
      let response: IncomingMessage | undefined;
      // What it throws rejects this promise: nothing was sent.
      const outgoing: ClientRequest = unsent(() => (tls ? httpsRequest : httpRequest)(options));
      const onAbort = (): void => {
        const reason: unknown = signal.reason;
        const err = reason instanceof Error ? reason : new Error(String(reason));
        outgoing.destroy(err);
        response?.destroy(err);
        reject(err);
      };
      const done = (): void => signal.removeEventListener('abort', onAbort);
      signal.addEventListener('abort', onAbort, { once: true });
      let sent = false;
      outgoing.once('finish', () => {
        sent = true;
      });
      outgoing.on('error', (err) => {
        done();
        reject(new PinnedFetchError(`fetch failed: ${err.message}`, sent, { cause: err }));
      });
      outgoing.once('response', (res) => {
        response = res;
        res.once('close', done);
        // A body cut short errors its stream (which the reader sees); an unread one must not throw.
        res.on('error', () => undefined);
        try {
          resolve(toResponse(res, req.method));
        } catch (err) {
          res.destroy();
          reject(err instanceof Error ? err : new TypeError(String(err)));
        }
      });
      outgoing.end(body ?? undefined);
    });
  };

  return {
    fetch,
    close() {
      closed = true;
      agent.destroy();
    },
  };
}

/**
 * Runs what builds a request (the Request, node's ClientRequest): what it throws — a header value
 * HTTP cannot carry, a bad method — is a request never sent, so a {@link PinnedFetchError} with
 * `sent: false`, and a caller never takes it for a connection lost after sending.
 */
function unsent<T>(build: () => T): T {
  try {
    return build();
  } catch (err) {
    throw new PinnedFetchError(
      `fetch refused before sending: ${err instanceof Error ? err.message : String(err)}`,
      false,
      { cause: err },
    );
  }
}

/** A web Response whose body streams from `res`. @throws TypeError on an unusable status. */
function toResponse(res: IncomingMessage, method: string): Response {
  const status = res.statusCode ?? 0;
  if (status < 200 || status > 599)
    throw new TypeError(`fetch failed: the upstream answered status ${status}`);
  const headers = new Headers();
  for (let i = 0; i + 1 < res.rawHeaders.length; i += 2)
    headers.append(res.rawHeaders[i]!, res.rawHeaders[i + 1]!);
  const empty = NULL_BODY.has(status) || method === 'HEAD';
  if (empty) res.resume();
  const body = empty ? null : (Readable.toWeb(res) as ReadableStream<Uint8Array>);
  return new Response(body, {
    status,
    statusText: res.statusMessage ?? '',
    headers,
  });
}
