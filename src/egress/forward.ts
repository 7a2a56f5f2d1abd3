import { STATUS_CODES } from 'node:http';
import type { IncomingHttpHeaders, OutgoingHttpHeaders } from 'node:http';
import { connect } from 'node:net';
import type { Socket } from 'node:net';
import { formatIp } from './ip-address.js';
import type { IpAddress } from './ip-address.js';

/** Headers that describe one hop, never forwarded (RFC 9110 §7.6.1), plus the proxy's own. */
const HOP_BY_HOP = new Set([
  'connection',
  'keep-alive',
  'proxy-connection',
  'proxy-authorization',
  'proxy-authenticate',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
]);

/**
 * The headers to send upstream for a plain-HTTP request: the client's, less hop-by-hop ones and
 * those its `Connection` header names; `Host` set from the request target (so it cannot name a
 * different site than the one checked); then `inject`ed headers, which replace any of the same name.
 */
export function upstreamHeaders(
  headers: NodeJS.Dict<string[]>,
  hostHeader: string,
  inject: Record<string, string>,
): OutgoingHttpHeaders {
  const named = new Set(
    (headers.connection ?? []).flatMap((v) => v.split(',').map((t) => t.trim().toLowerCase())),
  );
  const out: OutgoingHttpHeaders = {};
  for (const [name, values] of Object.entries(headers)) {
    if (values === undefined || HOP_BY_HOP.has(name) || named.has(name) || name === 'host')
      continue;
    out[name] = values.length === 1 ? values[0] : values;
  }
  out.host = hostHeader;
  for (const [name, value] of Object.entries(inject)) out[name.toLowerCase()] = value;
  return out;
}

/** The response headers to send back to the client: upstream's, less hop-by-hop ones. */
export function downstreamHeaders(headers: IncomingHttpHeaders): OutgoingHttpHeaders {
  const named = new Set(
    String(headers.connection ?? '')
      .split(',')
      .map((t) => t.trim().toLowerCase()),
  );
  const out: OutgoingHttpHeaders = {};
  for (const [name, value] of Object.entries(headers)) {
    if (value === undefined || HOP_BY_HOP.has(name) || named.has(name)) continue;
    out[name] = value;
  }
  return out;
}

/** The `Host` header for a target: the host, bracketed if IPv6, with the port unless 80. */
export function hostHeader(host: string, port: number): string {
  const h = host.includes(':') ? `[${host}]` : host;
  return port === 80 ? h : `${h}:${port}`;
}

/**
 * The header on every answer the egress proxy gives itself (a refusal, a failed connection), so a
 * client such as a browser can tell it from the upstream's own answer. Its value is the status.
 */
export const EGRESS_ANSWER_HEADER = 'X-Gatehouse-Egress';

/** A complete HTTP/1.1 response with a short text body, for answering on a raw socket. */
export function rawResponse(status: number, text: string): string {
  const body = `${text}\n`;
  return (
    `HTTP/1.1 ${status} ${STATUS_CODES[status] ?? ''}\r\n` +
    `Content-Type: text/plain; charset=utf-8\r\n` +
    `Content-Length: ${Buffer.byteLength(body)}\r\n` +
    `${EGRESS_ANSWER_HEADER}: ${status}\r\n` +
    `Connection: close\r\n\r\n${body}`
  );
}

/** A TCP connection to one of the checked addresses. */
type Connected = { ok: true; socket: Socket; address: string } | { ok: false; why: string };

/**
 * Connects to the checked addresses in order, each with its own timeout, and returns the first
 * that answers. `track` is told of every socket as soon as it exists, so a lease can end it.
 * Never resolves a name: only the addresses given are tried.
 */
export async function connectFirst(
  addresses: readonly IpAddress[],
  port: number,
  timeoutMs: number,
  track: (socket: Socket) => void,
): Promise<Connected> {
  const failures: string[] = [];
  for (const ip of addresses) {
    const address = formatIp(ip);
    try {
      return {
        ok: true,
        socket: await connectOne(address, ip.family, port, timeoutMs, track),
        address,
      };
    } catch (err) {
      const code = (err as { code?: unknown }).code;
      failures.push(`${address}: ${typeof code === 'string' ? code : (err as Error).message}`);
    }
  }
  return { ok: false, why: failures.join('; ') };
}

function connectOne(
  address: string,
  family: 4 | 6,
  port: number,
  timeoutMs: number,
  track: (socket: Socket) => void,
): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const socket = connect({ host: address, port, family });
    track(socket);
    const fail = (err: Error): void => {
      clearTimeout(timer);
      socket.destroy();
      reject(err);
    };
    const timer = setTimeout(() => fail(new Error(`timed out after ${timeoutMs} ms`)), timeoutMs);
    const closed = (): void => fail(new Error('closed'));
    socket.once('error', fail);
    socket.once('close', closed);
    socket.once('connect', () => {
      clearTimeout(timer);
      socket.removeListener('error', fail);
      socket.removeListener('close', closed);
      resolve(socket);
    });
  });
}
