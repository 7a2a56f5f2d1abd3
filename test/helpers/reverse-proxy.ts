import { createServer, request } from 'node:http';
import type { IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';

/** A reverse proxy on loopback, as {@link startReverseProxy} starts it. */
export interface ReverseProxy {
  /** `http://127.0.0.1:PORT`, where clients reach it. */
  url: string;
  close(): Promise<void>;
}

/**
 * A small reverse proxy on 127.0.0.1 in front of `target` (an `http://host:port` URL), like nginx
 * with `proxy_pass`: each request goes on with the headers `rewrite` makes of the client's (it
 * sets `Host`, `X-Forwarded-*` as the proxy under test would), and `X-Forwarded-For` gets the
 * client's address appended. The answer streams back as it comes. It listens on `port` (default:
 * any free one).
 */
export async function startReverseProxy(
  target: string,
  rewrite: (headers: IncomingHttpHeaders) => IncomingHttpHeaders,
  port = 0,
): Promise<ReverseProxy> {
  const to = new URL(target);
  const server = createServer((req, res) => {
    const forwardedFor = [req.headers['x-forwarded-for'], req.socket.remoteAddress]
      .filter((x) => x !== undefined)
      .join(', ');
    const headers = rewrite({ ...req.headers, 'x-forwarded-for': forwardedFor });
    const upstream = request(
      { host: to.hostname, port: to.port, path: req.url, method: req.method, headers },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      },
    );
    upstream.on('error', (err) => res.writeHead(502).end(String(err)));
    req.pipe(upstream);
  });
  await new Promise<void>((ok) => server.listen(port, '127.0.0.1', ok));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () =>
      new Promise<void>((ok) => {
        server.closeAllConnections();
        server.close(() => ok());
      }),
  };
}
