/**
 * A loopback HTTP server in a child process that answers `GET /?bytes=N` with N bytes of text,
 * streamed: the large HTTP output of the memory bench, its memory not the gateway's.
 */
import { spawn } from 'node:child_process';

/** The server's port, and how to stop it. */
export interface FloodHttp {
  port: number;
  close: () => Promise<void>;
}

const CODE = `
  const chunk = Buffer.alloc(64 * 1024, 'abcdefghij');
  const server = require('node:http').createServer((req, res) => {
    const total = Number(new URL(req.url, 'http://x').searchParams.get('bytes') || 0);
    res.writeHead(200, { 'content-type': 'text/plain' });
    let sent = 0;
    const more = () => {
      while (sent < total) {
        const part = chunk.subarray(0, Math.min(chunk.length, total - sent));
        sent += part.length;
        if (!res.write(part)) return void res.once('drain', more);
      }
      res.end();
    };
    more();
  });
  server.listen(0, '127.0.0.1', () => process.stdout.write(server.address().port + '\\n'));
`;

/** Starts the server; resolves once it listens. */
export async function startFloodHttp(): Promise<FloodHttp> {
  const child = spawn(process.execPath, ['-e', CODE], { stdio: ['ignore', 'pipe', 'inherit'] });
  const port = await new Promise<number>((ok, fail) => {
    child.stdout.once('data', (b: Buffer) => ok(Number(b.toString().trim())));
    child.once('exit', (c) => fail(new Error(`the flood server exited with ${c}`)));
  });
  return {
    port,
    close: async () => {
      if (child.exitCode !== null) return;
      const exited = new Promise((ok) => child.once('exit', ok));
      child.kill();
      await exited;
    },
  };
}
