import { randomUUID } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { McpServer, WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/server';
import { afterEach, describe, expect, it } from 'vitest';
import { McpHarness, TENANT, until } from './mcp-harness.js';
import { send, toRequest } from '../helpers/web-request.js';

/**
 * A stateful MCP server over Streamable HTTP on 127.0.0.1 (sessions, and the event stream a
 * client opens with GET), which the test can take down, bring back on the same port, or make
 * forget its sessions while it stays up.
 */
interface Upstream {
  url: string;
  /** Sessions it made (one per initialize). */
  sessions: number;
  /** While true it answers the GET of the event stream with 404, as a server without one may. */
  noEventStream: boolean;
  /** Cuts every connection, event streams included, and stops listening; sessions are lost. */
  down(): Promise<void>;
  /** Listens again on the same port. */
  up(): Promise<void>;
  /** Forgets every session (their requests get 404) and keeps every connection open. */
  forget(): void;
  close(): Promise<void>;
}

async function startUpstream(): Promise<Upstream> {
  const live = new Map<string, WebStandardStreamableHTTPServerTransport>();
  const server = createServer((req, res) => {
    void (async () => {
      const request = await toRequest(req);
      const sid = request.headers.get('mcp-session-id');
      let transport = sid ? live.get(sid) : undefined;
      if (request.method === 'GET' && up.noEventStream) {
        res.writeHead(404).end('not found');
        return;
      }
      if (sid && !transport) {
        res.writeHead(404, { 'content-type': 'application/json' }).end(
          JSON.stringify({
            jsonrpc: '2.0',
            error: { code: -32001, message: 'Session not found' },
            id: null,
          }),
        );
        return;
      }
      // One call is refused at the HTTP level: a single failed request, not a lost server.
      if (request.method === 'POST' && (await request.clone().text()).includes('"too-big"')) {
        res.writeHead(413).end('payload too large');
        return;
      }
      if (!transport) {
        const t = new WebStandardStreamableHTTPServerTransport({
          sessionIdGenerator: () => randomUUID(),
          onsessioninitialized: (id) => {
            up.sessions += 1;
            live.set(id, t);
          },
        });
        const mcp = new McpServer({ name: 'session-upstream', version: '1.0.0' });
        mcp.registerTool('hello', { description: 'says hello' }, () => ({
          content: [{ type: 'text', text: 'hello' }],
        }));
        mcp.registerTool('too-big', { description: 'refused by the HTTP layer' }, () => ({
          content: [],
        }));
        await mcp.connect(t);
        transport = t;
      }
      await send(res, await transport.handleRequest(request));
    })().catch(() => res.destroy());
  });
  const listen = (port: number) =>
    new Promise<void>((ok) => server.listen(port, '127.0.0.1', () => ok()));
  await listen(0);
  const port = (server.address() as AddressInfo).port;
  const stop = () => {
    live.clear();
    server.closeAllConnections();
    return new Promise<void>((ok) => server.close(() => ok()));
  };
  const up: Upstream = {
    url: `http://127.0.0.1:${port}/mcp`,
    sessions: 0,
    noEventStream: false,
    down: stop,
    up: () => listen(port),
    forget: () => live.clear(),
    close: () => (server.listening ? stop() : Promise.resolve()),
  };
  return up;
}

let h: McpHarness | undefined;
let upstream: Upstream | undefined;
afterEach(async () => {
  await h?.close();
  await upstream?.close();
  h = undefined;
  upstream = undefined;
});

const hello = [{ tool: 'hello', class: 'read' as const, id: 'session.hello' }];

describe('an HTTP upstream that goes away', () => {
  it('is probed again at once when its stream drops: degraded in moments, active when back', async () => {
    upstream = await startUpstream();
    h = await McpHarness.open({ failuresToDegrade: 2, reprobeMs: 100 });
    const { id, descriptors } = await h.ready('goes-away', { type: 'http', url: upstream.url }, [
      ...hello,
    ]);
    expect((await h.call(descriptors.hello!, {})).status).toBe('observed');
    await upstream.down();
    // No probe was asked for: the dropped event stream starts them.
    await until(async () => (await h!.mcp.get(TENANT, id)).server.state === 'degraded');
    await upstream.up();
    await until(async () => (await h!.mcp.get(TENANT, id)).server.state === 'active', 10_000);
    expect((await h.call(descriptors.hello!, {})).status).toBe('observed');
  });

  it('that says the session is gone (404) is reconnected: the next call gets a new session', async () => {
    upstream = await startUpstream();
    h = await McpHarness.open();
    const { descriptors } = await h.ready('forgets', { type: 'http', url: upstream.url }, hello);
    expect((await h.call(descriptors.hello!, {})).status).toBe('observed');
    expect(upstream.sessions).toBe(1);
    upstream.forget();
    expect(await h.call(descriptors.hello!, {})).toMatchObject({ status: 'failed' });
    expect(await h.call(descriptors.hello!, {})).toMatchObject({ status: 'observed' });
    expect(upstream.sessions).toBe(2);
  });

  it('a single request the HTTP layer refuses is no lost server: the session stays', async () => {
    upstream = await startUpstream();
    h = await McpHarness.open();
    const { descriptors } = await h.ready('refuses-one', { type: 'http', url: upstream.url }, [
      ...hello,
      { tool: 'too-big', class: 'read', id: 'session.too-big' },
    ]);
    expect(await h.call(descriptors['too-big']!, {})).toMatchObject({ status: 'failed' });
    expect((await h.call(descriptors.hello!, {})).status).toBe('observed');
    expect(upstream.sessions).toBe(1);
  });

  it('a server without an event stream (404 to its GET) keeps its session', async () => {
    upstream = await startUpstream();
    upstream.noEventStream = true;
    h = await McpHarness.open();
    const { descriptors } = await h.ready('no-stream', { type: 'http', url: upstream.url }, hello);
    expect((await h.call(descriptors.hello!, {})).status).toBe('observed');
    expect((await h.call(descriptors.hello!, {})).status).toBe('observed');
    expect(upstream.sessions).toBe(1);
  });
});
