import { createServer } from 'node:http';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { McpServer, WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/server';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { isGatehouseError } from '../../src/core/index.js';
import { GatewayEgress } from '../../src/egress/index.js';
import type { McpServerView, McpServiceOptions } from '../../src/mcp/index.js';
import { startDemoGateway } from '../helpers/gateway-fixture.js';
import type { DemoGateway } from '../helpers/gateway-fixture.js';
import { ACTOR, McpHarness, TENANT } from './mcp-harness.js';
import { send, toRequest } from '../helpers/web-request.js';

/** A stateless MCP server over Streamable HTTP on 127.0.0.1; its POST answers are SSE streams. */
interface Upstream {
  port: number;
  /** The Host header of every request it received. */
  hosts: string[];
  /** The content type of every answer it streamed. */
  types: string[];
  /** While true it answers 503 (a probe fails, the connection is dropped). */
  down: boolean;
  close(): Promise<void>;
}

async function startUpstream(): Promise<Upstream> {
  const up: Upstream = {
    port: 0,
    hosts: [],
    types: [],
    down: false,
    close: () => Promise.resolve(),
  };
  const server = createServer((req, res) => {
    up.hosts.push(req.headers.host ?? '');
    if (up.down) {
      res.writeHead(503).end('down');
      return;
    }
    void (async () => {
      const mcp = new McpServer({ name: 'egress-upstream', version: '1.0.0' });
      mcp.registerTool('hello', { description: 'says hello' }, () => ({
        content: [{ type: 'text', text: 'hello' }],
      }));
      const transport = new WebStandardStreamableHTTPServerTransport({
        sessionIdGenerator: undefined,
      });
      await mcp.connect(transport);
      const response = await transport.handleRequest(await toRequest(req));
      up.types.push(response.headers.get('content-type') ?? '');
      await send(res, response);
    })();
  });
  await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok));
  up.port = (server.address() as AddressInfo).port;
  up.close = () => closeServer(server);
  return up;
}

function closeServer(server: Server): Promise<void> {
  server.closeAllConnections();
  return new Promise((ok) => server.close(() => ok()));
}

/** The McpService options that put it behind `egress`, as the gateway wires them. */
function behind(egress: GatewayEgress): Partial<McpServiceOptions> {
  return { checkUrl: (url) => egress.check(url), connectHttp: (url) => egress.connect(url) };
}

describe('HTTP upstreams through the gateway: the egress allow-list', () => {
  let g: DemoGateway;
  let up: Upstream;
  let defaults: string[];
  beforeAll(async () => {
    up = await startUpstream();
    g = await startDemoGateway();
    defaults = g.gateway.config.sandbox.egressAllow;
  });
  afterEach(() => {
    g.gateway.config.sandbox.egressAllow = defaults;
  });
  afterAll(async () => {
    await g?.close();
    await up?.close();
  });

  interface ErrorAnswer {
    error: { code: string; message: string; details: { pointer?: string } };
  }

  it('refuses to register an unlisted host and port, says what to add, and stores nothing', async () => {
    const cases = [
      [`http://127.0.0.1:${up.port}/mcp`, `host 127.0.0.1 port ${up.port}`, `127.0.0.1:${up.port}`],
      ['https://mcp.example.com/mcp', 'host mcp.example.com port 443', 'mcp.example.com:443'],
      [`http://[::1]:${up.port}/mcp`, `host ::1 port ${up.port}`, `[::1]:${up.port}`],
    ] as const;
    for (const [url, where, entry] of cases) {
      const res = await g.inject<ErrorAnswer>('POST', '/v1/mcp-servers', {
        token: g.tokens.admin,
        body: { name: 'unlisted', transport: { type: 'http', url } },
      });
      expect(res.status, JSON.stringify(res.body)).toBe(400);
      expect(res.body.error.code).toBe('INVALID_INPUT');
      expect(res.body.error.details.pointer).toBe('/transport/url');
      expect(res.body.error.message).toContain(`${where} is not in the egress allow-list`);
      expect(res.body.error.message).toContain(`add "${entry}" to GATEHOUSE_EGRESS_ALLOW`);
    }
    const list = await g.inject<{ servers: { name: string }[] }>('GET', '/v1/mcp-servers', {
      token: g.tokens.admin,
    });
    expect(list.body.servers.map((s) => s.name)).not.toContain('unlisted');
    expect(up.hosts).toEqual([]);
  });

  it('registers, verifies and discovers once the address is listed (the list is read at each check)', async () => {
    g.gateway.config.sandbox.egressAllow = [...defaults, `127.0.0.1:${up.port}`];
    const created = await g.inject<{ id: string; state: string }>('POST', '/v1/mcp-servers', {
      token: g.tokens.admin,
      body: { name: 'listed', transport: { type: 'http', url: `http://127.0.0.1:${up.port}/mcp` } },
    });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const verified = await g.inject<McpServerView>(
      'POST',
      `/v1/mcp-servers/${created.body.id}/verify`,
      { token: g.tokens.admin },
    );
    expect(verified.status, JSON.stringify(verified.body)).toBe(200);
    expect(verified.body.server.state).toBe('verified');
    expect(verified.body.discovery?.tools.map((t) => t.tool.name)).toEqual(['hello']);
    expect(up.hosts.length).toBeGreaterThan(0);
    expect(new Set(up.hosts)).toEqual(new Set([`127.0.0.1:${up.port}`]));
    await g.gateway.mcp.retire(TENANT, created.body.id, ACTOR);
  });

  it('refuses at connect a listed name that resolves to a loopback address not listed by IP', async () => {
    g.gateway.config.sandbox.egressAllow = [...defaults, `localhost:${up.port}`];
    const before = up.hosts.length;
    const server = await g.gateway.mcp.register(TENANT, ACTOR, {
      name: 'by-name',
      transport: { type: 'http', url: `http://localhost:${up.port}/mcp` },
    });
    const err = await g.gateway.mcp.verify(TENANT, server.id, ACTOR).catch((e: unknown) => e);
    expect(isGatehouseError(err) && err.code).toBe('UNAVAILABLE');
    expect((err as Error).message).toMatch(
      /egress to localhost port \d+ refused: host localhost resolves to (127\.0\.0\.1|::1), a loopback/,
    );
    expect((err as Error).message).toMatch(/add "(127\.0\.0\.1|\[::1\]):\d+" to the allow-list/);
    expect((await g.gateway.mcp.get(TENANT, server.id)).server.state).toBe('registered');
    expect(up.hosts.length).toBe(before);
    await g.gateway.mcp.retire(TENANT, server.id, ACTOR);
  });
});

describe('HTTP upstreams: each connection is authorized and pinned', () => {
  let up: Upstream;
  let h: McpHarness | undefined;
  beforeAll(async () => {
    up = await startUpstream();
  });
  afterEach(async () => {
    await h?.close();
    h = undefined;
    up.down = false;
    up.hosts.length = 0;
    up.types.length = 0;
  });
  afterAll(async () => {
    await up?.close();
  });

  it('resolves a name once per connection and sends every request to the checked address, by name', async () => {
    const answers = ['127.0.0.1'];
    const asked: string[] = [];
    const egress = new GatewayEgress({
      allow: () => [`upstream.test:${up.port}`, `127.0.0.1:${up.port}`],
      // upstream.test is in no DNS: only the pinned lookup can reach it.
      resolve: (host) => {
        asked.push(host);
        return Promise.resolve(answers);
      },
    });
    h = await McpHarness.open(behind(egress));
    const { descriptors } = await h.ready(
      'named',
      { type: 'http', url: `http://upstream.test:${up.port}/mcp` },
      [{ tool: 'hello', class: 'read', id: 'egress.hello' }],
    );
    expect(await h.call(descriptors.hello!, {})).toMatchObject({ status: 'observed' });
    // A later DNS answer (rebinding) changes nothing for the connection that was checked.
    answers[0] = '10.0.0.1';
    expect(await h.call(descriptors.hello!, {})).toMatchObject({ status: 'observed' });
    expect(asked).toEqual(['upstream.test']);
    // The answers came as Server-Sent Events streams, read through the pinned fetch.
    expect(up.types).toContain('text/event-stream');
    expect(up.hosts.length).toBeGreaterThan(3);
    expect(new Set(up.hosts)).toEqual(new Set([`upstream.test:${up.port}`]));
  });

  it('refuses a name resolving to loopback unless the address is listed: nothing sent, no credentials issued', async () => {
    let issued = 0;
    const egress = new GatewayEgress({
      allow: () => [`upstream.test:${up.port}`],
      resolve: () => Promise.resolve(['127.0.0.1']),
    });
    h = await McpHarness.open({
      ...behind(egress),
      issueCredentials: () => {
        issued += 1;
        return Promise.reject(new Error('no broker in this test'));
      },
    });
    const server = await h.mcp.register(TENANT, ACTOR, {
      name: 'rebinding',
      transport: {
        type: 'http',
        url: `http://upstream.test:${up.port}/mcp`,
        credentials: [{ ref: 'token', scope: 'mcp', inject: { header: 'Authorization' } }],
      },
    });
    const err = await h.mcp.verify(TENANT, server.id, ACTOR).catch((e: unknown) => e);
    expect(isGatehouseError(err) && err.code).toBe('UNAVAILABLE');
    expect((err as Error).message).toContain(
      `host upstream.test resolves to 127.0.0.1, a loopback (127.0.0.0/8) address`,
    );
    expect((err as Error).message).toContain(`add "127.0.0.1:${up.port}" to the allow-list`);
    expect(issued).toBe(0);
    expect(up.hosts).toEqual([]);
  });

  it('authorizes a reconnect again: a narrowed list fails calls with SERVER_UNAVAILABLE before any request', async () => {
    const allow = [`127.0.0.1:${up.port}`];
    const egress = new GatewayEgress({ allow: () => allow, source: 'the test list' });
    h = await McpHarness.open({ ...behind(egress), failuresToDegrade: 5 });
    const { id, descriptors } = await h.ready(
      'narrowed',
      { type: 'http', url: `http://127.0.0.1:${up.port}/mcp` },
      [{ tool: 'hello', class: 'read', id: 'egress.narrowed' }],
    );
    expect(await h.call(descriptors.hello!, {})).toMatchObject({ status: 'observed' });

    // A failed probe drops the connection; the next call must connect again.
    up.down = true;
    expect(await h.mcp.probe(TENANT, id)).toBe('active');
    up.down = false;
    allow.length = 0;
    const sent = up.hosts.length;
    const refused = await h.call(descriptors.hello!, {});
    expect(refused).toMatchObject({ status: 'failed', code: 'SERVER_UNAVAILABLE' });
    expect((refused as { message: string }).message).toContain(
      `host 127.0.0.1 port ${up.port} is not in the egress allow-list (the test list: it is empty)`,
    );
    expect(up.hosts.length).toBe(sent);

    allow.push(`127.0.0.1:${up.port}`);
    await new Promise((r) => setTimeout(r, 20)); // past the reconnect backoff
    expect(await h.call(descriptors.hello!, {})).toMatchObject({ status: 'observed' });
  });
});
