import { createServer } from 'node:net';

/** A TCP port on 127.0.0.1 that nothing listens on (it was free a moment ago); tests and bench alike. */
export function freePort(): Promise<number> {
  return new Promise((ok, fail) => {
    const s = createServer();
    s.once('error', fail);
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => ok(port));
    });
  });
}
