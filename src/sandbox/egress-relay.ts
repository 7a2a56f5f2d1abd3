import { randomBytes } from 'node:crypto';
import { chmod, chown, mkdir, rm } from 'node:fs/promises';
import { createConnection, createServer } from 'node:net';
import type { Server, Socket } from 'node:net';
import { join } from 'node:path';

/** Most connections refused between calls that are itemised for the next call's record. */
const MAX_NOTED = 100;
/** Most connections refused between calls whose request line is still being read. */
const MAX_READING = 16;
/** Longest wait for, and longest, request line of a connection refused between calls. */
const HEAD_TIMEOUT_MS = 2000;
const MAX_HEAD_BYTES = 4096;
const FORBIDDEN_BODY =
  'gatehouse: no call of this attempt is running; its browser or desktop reaches the network only during a call\n';
const FORBIDDEN = `HTTP/1.1 403 Forbidden\r\nContent-Type: text/plain\r\nContent-Length: ${FORBIDDEN_BODY.length}\r\nConnection: close\r\n\r\n${FORBIDDEN_BODY}`;

/**
 * A connection refused because no call was running, in the shape of an egress decision, for the
 * record of the next call that uses the relay.
 */
export interface RefusedBetweenCalls {
  /** ISO 8601 time the connection arrived. */
  at: string;
  /** `CONNECT`, the plain-HTTP method, or empty when no request line came. */
  method: string;
  /** The host the request named (lower case, no trailing dot); empty when none. */
  host: string;
  /** The port it named; 0 when none. */
  port: number;
  allowed: false;
  reason: string;
  betweenCalls: true;
}

/**
 * The way to the egress proxy of a sandbox that outlives calls (a desktop, a warm browser): a Unix
 * socket of its own, bound into the sandbox where the proxy's socket goes, that passes each
 * connection to the egress endpoint of the call running now (so the decisions are that call's, on
 * its record). Between calls it answers each connection 403 and notes what it asked for, for the
 * next call's record ({@link takeRefused}). Each call's endpoint closes with the call; this socket
 * stays.
 */
export class EgressRelay {
  private target: string | null = null;
  private readonly open = new Set<Socket>();
  private readonly reading = new Set<Socket>();
  private noted: RefusedBetweenCalls[] = [];
  private unnoted = 0;
  private closing: Promise<void> | null = null;

  private constructor(
    private readonly server: Server,
    private readonly dir: string,
    /** Host path of the relay's socket. */
    readonly path: string,
  ) {}

  /**
   * Listens in a fresh directory under `scratch` (named at random: the sandbox sees the path in
   * its mount table), reachable by `owner` only when given (the sandbox user of a root gateway).
   */
  static async open(
    scratch: string,
    owner: { uid: number; gid: number } | null,
  ): Promise<EgressRelay> {
    const dir = join(scratch, randomBytes(9).toString('base64url'));
    await mkdir(dir, { mode: 0o700 });
    const path = join(dir, 'egress.sock');
    const server = createServer();
    const relay = new EgressRelay(server, dir, path);
    server.on('connection', (socket) => relay.pass(socket));
    try {
      await new Promise<void>((resolve, reject) => {
        server.once('error', reject);
        server.listen(path, () => resolve());
      });
      await chmod(path, 0o666);
      if (owner) await chown(dir, owner.uid, owner.gid);
      return relay;
    } catch (err) {
      await relay.close();
      throw err;
    }
  }

  /** Where connections go from now on: a call's egress socket, or null (refused) between calls. */
  use(target: string | null): void {
    this.target = target;
    if (target === null) for (const s of this.open) s.destroy();
  }

  /**
   * The connections refused between calls since the last take, oldest first (at most
   * {@link MAX_NOTED}; one more entry counts those beyond), and forgets them.
   */
  takeRefused(): RefusedBetweenCalls[] {
    const taken = this.noted;
    if (this.unnoted > 0)
      taken.push(
        refusal(
          new Date().toISOString(),
          { method: '', host: '', port: 0 },
          `between calls: ${this.unnoted} more connections were refused and not itemised (at most ${MAX_NOTED} are)`,
        ),
      );
    this.noted = [];
    this.unnoted = 0;
    return taken;
  }

  /** Stops listening, drops every connection and removes the socket. Safe twice. */
  close(): Promise<void> {
    return (this.closing ??= (async () => {
      this.use(null);
      for (const s of this.reading) s.destroy();
      await new Promise<void>((resolve) => this.server.close(() => resolve()));
      await rm(this.dir, { recursive: true, force: true });
    })());
  }

  private pass(socket: Socket): void {
    const target = this.target;
    if (target === null) {
      this.refuse(socket);
      return;
    }
    const upstream = createConnection(target);
    this.open.add(socket);
    const drop = (): void => {
      this.open.delete(socket);
      socket.destroy();
      upstream.destroy();
    };
    socket.on('error', drop).on('close', drop);
    upstream.on('error', drop).on('close', drop);
    socket.pipe(upstream);
    upstream.pipe(socket);
  }

  /** Answers a connection that came between calls 403, noting the request line it sent. */
  private refuse(socket: Socket): void {
    const at = new Date().toISOString();
    if (this.reading.size >= MAX_READING || this.closing) {
      this.unnoted += 1;
      socket.destroy();
      return;
    }
    this.reading.add(socket);
    let head = '';
    let done = false;
    const finish = (line: string | null): void => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      this.reading.delete(socket);
      this.note(refusal(at, parseRequestLine(line), BETWEEN_CALLS));
      socket.end(FORBIDDEN, () => socket.destroy());
    };
    const timer = setTimeout(() => finish(null), HEAD_TIMEOUT_MS);
    socket.setEncoding('latin1');
    socket.on('data', (chunk: string) => {
      head += chunk;
      const eol = head.indexOf('\n');
      if (eol >= 0) finish(head.slice(0, eol));
      else if (head.length > MAX_HEAD_BYTES) finish(null);
    });
    socket.on('error', () => finish(null));
    socket.on('end', () => finish(null));
  }

  private note(r: RefusedBetweenCalls): void {
    if (this.noted.length < MAX_NOTED) this.noted.push(r);
    else this.unnoted += 1;
  }
}

const BETWEEN_CALLS =
  'between calls: no call of the attempt was running, and a browser or desktop kept between calls reaches the network only during one (answered 403)';

function refusal(
  at: string,
  target: { method: string; host: string; port: number },
  reason: string,
): RefusedBetweenCalls {
  return { at, ...target, allowed: false, reason, betweenCalls: true };
}

/**
 * The method and target of an HTTP proxy request line (`CONNECT host:port HTTP/1.1`, `GET
 * http://host/path HTTP/1.1`); empty fields for anything else.
 */
export function parseRequestLine(line: string | null): {
  method: string;
  host: string;
  port: number;
} {
  const none = { method: '', host: '', port: 0 };
  const m = /^([A-Z]{1,16}) (\S{1,2048}) HTTP\/1\.[01]\r?$/.exec(line ?? '');
  if (!m) return none;
  const method = m[1]!;
  let host: string;
  let port: number;
  if (method === 'CONNECT') {
    const t = /^(?:\[([0-9A-Fa-f:.]+)\]|([^:[\]]+)):(\d{1,5})$/.exec(m[2]!);
    if (!t) return { ...none, method };
    host = t[1] ?? t[2]!;
    port = Number(t[3]);
  } else {
    let url: URL;
    try {
      url = new URL(m[2]!);
    } catch {
      return { ...none, method };
    }
    if (url.protocol !== 'http:' && url.protocol !== 'https:') return { ...none, method };
    host = url.hostname.replace(/^\[(.*)\]$/, '$1');
    port = url.port === '' ? (url.protocol === 'https:' ? 443 : 80) : Number(url.port);
  }
  if (port < 1 || port > 65535) return { ...none, method };
  return { method, host: host.toLowerCase().replace(/\.$/, ''), port };
}
