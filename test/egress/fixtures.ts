import { gzipSync } from 'node:zlib';
import { createServer as createHttpServer, request } from 'node:http';
import type { IncomingHttpHeaders } from 'node:http';
import { connect, createServer } from 'node:net';
import type { AddressInfo, Server, Socket } from 'node:net';

/** A loopback server and how to stop it. */
export interface Started {
  port: number;
  close(): Promise<void>;
}

function listen(server: Server): Promise<Started> {
  return new Promise((resolve) => {
    const sockets = new Set<Socket>();
    server.on('connection', (s: Socket) => {
      sockets.add(s);
      s.once('close', () => sockets.delete(s));
    });
    server.listen(0, '127.0.0.1', () => {
      resolve({
        port: (server.address() as AddressInfo).port,
        close: () =>
          new Promise((done) => {
            for (const s of sockets) s.destroy();
            server.close(() => done());
          }),
      });
    });
  });
}

/** A TCP echo server on 127.0.0.1: the stand-in for an HTTPS origin behind CONNECT. */
export function startEcho(): Promise<Started & { connections: () => number }> {
  let count = 0;
  const server = createServer((s) => {
    count++;
    s.on('error', () => {});
    s.pipe(s);
  });
  return listen(server).then((started) => ({ ...started, connections: () => count }));
}

/** What the HTTP origin saw of one request. */
export interface Seen {
  method: string;
  url: string;
  headers: IncomingHttpHeaders;
  body: string;
}

/** An HTTP origin on 127.0.0.1 that answers each request with the JSON of what it saw. */
export function startOrigin(): Promise<Started & { seen: Seen[] }> {
  const seen: Seen[] = [];
  const server = createHttpServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      const s = { method: req.method ?? '', url: req.url ?? '', headers: req.headers, body };
      seen.push(s);
      res.setHeader('content-type', 'application/json');
      res.setHeader('x-origin', 'yes');
      // Like many real upstreams, it echoes the caller's credential (in a header and the body).
      if (req.headers.authorization)
        res.setHeader('x-echo-authorization', req.headers.authorization);
      if (req.url === '/gzip') {
        res.setHeader('content-encoding', 'gzip');
        res.end(gzipSync(JSON.stringify(s)));
      } else res.end(JSON.stringify(s));
    });
  });
  return listen(server).then((started) => ({ ...started, seen }));
}

/** The answer to a CONNECT: status, the tunnel socket, and for a refusal the text body. */
export interface Tunnel {
  status: number;
  socket: Socket;
  body: string;
}

/** Sends `CONNECT authority` to the proxy over its Unix socket. */
export function connectThrough(socketPath: string, authority: string): Promise<Tunnel> {
  return new Promise((resolve, reject) => {
    const req = request({ socketPath, method: 'CONNECT', path: authority });
    req.on('error', reject);
    req.on('connect', (res, socket: Socket, head: Buffer) => {
      const status = res.statusCode ?? 0;
      if (status === 200) {
        if (head.length > 0) socket.unshift(head);
        resolve({ status, socket, body: '' });
        return;
      }
      let body = head.toString();
      socket.on('data', (c: Buffer) => (body += c.toString()));
      socket.on('end', () => resolve({ status, socket, body }));
      socket.on('error', reject);
    });
    req.end();
  });
}

/** Writes `text` into a tunnel and reads back the same number of bytes. */
export function roundTrip(socket: Socket, text: string): Promise<string> {
  return new Promise((resolve, reject) => {
    let got = '';
    const onData = (c: Buffer): void => {
      got += c.toString();
      if (got.length >= text.length) {
        socket.off('data', onData);
        resolve(got);
      }
    };
    socket.on('data', onData);
    socket.once('error', reject);
    socket.write(text);
  });
}

/** A plain-HTTP request through the proxy (absolute-form target). */
export function getThrough(
  socketPath: string,
  url: string,
  headers: Record<string, string> = {},
  method = 'GET',
): Promise<{ status: number; headers: IncomingHttpHeaders; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request({ socketPath, method, path: url, headers, agent: false }, (res) => {
      let body = '';
      res.on('data', (c: Buffer) => (body += c.toString()));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
    });
    req.on('error', reject);
    req.end();
  });
}

/** Sends raw bytes to the proxy and returns everything it answers before closing. */
export function rawExchange(socketPath: string, bytes: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(socketPath);
    let got = '';
    socket.on('data', (c: Buffer) => (got += c.toString()));
    socket.on('close', () => resolve(got));
    socket.on('error', reject);
    socket.write(bytes);
  });
}

/** Resolves when the socket has closed. */
export function closed(socket: Socket): Promise<void> {
  return new Promise((resolve) => {
    if (socket.destroyed) resolve();
    else socket.once('close', () => resolve());
  });
}
