/**
 * server-everything as a child process, reached over Streamable HTTP: serving it itself, or over
 * stdio behind supergateway (an ungoverned HTTP→stdio proxy), each on a free loopback port.
 */
import { createRequire } from 'node:module';
import { createServer } from 'node:net';
import { dirname, join } from 'node:path';
import { spawnServer } from './load.js';
import type { ChildServer } from './load.js';

const require = createRequire(import.meta.url);

/** server-everything in Streamable HTTP mode. */
export async function spawnEverything(): Promise<ChildServer> {
  const port = await freePort();
  return spawnServer([everythingEntry(), 'streamableHttp'], { PORT: String(port) }, (output) =>
    /listening on port/i.test(output) ? `http://127.0.0.1:${port}` : null,
  );
}

/**
 * supergateway serving server-everything (stdio) as Streamable HTTP at `/mcp`. Stateful, so one
 * session keeps one server-everything child (stateless mode spawns one per request); no logging,
 * as the gateway runs without request logs. It prints nothing then, so readiness is a probe of
 * its health endpoint. On SIGTERM it stops its child's process group before it exits.
 */
export async function spawnSupergateway(): Promise<ChildServer> {
  const port = await freePort();
  const stdio = [process.execPath, everythingEntry(), 'stdio'].map(shellQuote).join(' ');
  const entry = join(dirname(require.resolve('supergateway/package.json')), 'dist', 'index.js');
  const args = [
    ...['--stdio', stdio, '--outputTransport', 'streamableHttp', '--stateful'],
    ...['--port', String(port), '--logLevel', 'none', '--healthEndpoint', '/healthz'],
  ];
  return spawnServer([entry, ...args], {}, { url: `http://127.0.0.1:${port}`, probe: '/healthz' });
}

function everythingEntry(): string {
  const pkg = require.resolve('@modelcontextprotocol/server-everything/package.json');
  return join(dirname(pkg), 'dist', 'index.js');
}

/** One word for `sh -c`, whatever it contains. */
function shellQuote(word: string): string {
  return `'${word.replaceAll("'", `'\\''`)}'`;
}

/** A free TCP port on 127.0.0.1 (neither server takes port 0). */
function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const address = s.address();
      s.close(() =>
        typeof address === 'object' && address
          ? resolve(address.port)
          : reject(new Error('no port')),
      );
    });
  });
}
