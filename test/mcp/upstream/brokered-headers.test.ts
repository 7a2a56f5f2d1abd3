import { createServer } from 'node:http';
import type { IncomingHttpHeaders, Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createTransport } from '../../../src/mcp/upstream/transport.js';
import type { ConnectionCredentials } from '../../../src/mcp/upstream/connection-options.js';

const KEY = 'mcp-brokered-7a3f0c';

interface Recorder {
  server: Server;
  port: number;
  seen: { url: string; headers: IncomingHttpHeaders }[];
}

/** A loopback server recording each request; `/moved` answers 307 to `redirectTo()`. */
async function recorder(redirectTo: () => string): Promise<Recorder> {
  const seen: Recorder['seen'] = [];
  const server = createServer((req, res) => {
    seen.push({ url: req.url ?? '', headers: req.headers });
    req.resume();
    if (req.url === '/moved') res.writeHead(307, { location: redirectTo() }).end();
    else
      res
        .writeHead(200, { 'content-type': 'application/json' })
        .end(JSON.stringify({ jsonrpc: '2.0', id: 1, result: {} }));
  });
  await new Promise<void>((ok) => server.listen(0, '127.0.0.1', () => ok()));
  return { server, port: (server.address() as AddressInfo).port, seen };
}

let a: Recorder;
let b: Recorder;
beforeAll(async () => {
  b = await recorder(() => '/');
  a = await recorder(() => `http://127.0.0.1:${b.port}/mcp`);
});
afterAll(async () => {
  for (const r of [a, b]) {
    r.server.closeAllConnections();
    await new Promise((ok) => r.server.close(ok));
  }
});
beforeEach(() => {
  a.seen.length = 0;
  b.seen.length = 0;
});

/** Opens a Streamable HTTP transport to `url` (global fetch) and sends one request through it. */
async function sendOne(url: string, headers: ConnectionCredentials['headers']): Promise<void> {
  const { transport } = await createTransport({
    transport: { type: 'http', url },
    onListChanged: () => undefined,
    onClosed: () => undefined,
    connectTimeoutMs: 5_000,
    maxMessageBytes: 1 << 20,
    credentials: { env: {}, headers, values: [], release: () => Promise.resolve() },
  });
  await transport.start();
  try {
    await transport
      .send({ jsonrpc: '2.0', id: 1, method: 'ping', params: {} })
      .catch(() => undefined);
  } finally {
    await transport.close();
  }
}

describe('brokered headers of a Streamable HTTP upstream', () => {
  it('go only to the exact origin they are bound to: not to the same host on another port or scheme', async () => {
    await sendOne(`http://127.0.0.1:${a.port}/mcp`, [
      { origin: `http://127.0.0.1:${a.port}`, name: 'X-Here', value: 'here' },
      { origin: `http://127.0.0.1:${b.port}`, name: 'X-Api-Key', value: KEY },
      { origin: `https://127.0.0.1:${a.port}`, name: 'Authorization', value: `Bearer ${KEY}` },
    ]);
    expect(a.seen).toHaveLength(1);
    expect(a.seen[0]!.headers['x-here']).toBe('here');
    expect(a.seen[0]!.headers['x-api-key']).toBeUndefined();
    expect(a.seen[0]!.headers.authorization).toBeUndefined();
  });

  it('are not carried through a redirect to another port of the same host', async () => {
    await sendOne(`http://127.0.0.1:${a.port}/moved`, [
      { name: 'X-Api-Key', value: KEY },
      { origin: `http://127.0.0.1:${a.port}`, name: 'X-Bound', value: KEY },
    ]);
    expect(a.seen.map((s) => [s.url, s.headers['x-api-key']])).toEqual([['/moved', KEY]]);
    expect(b.seen).toEqual([]);
  });
});
