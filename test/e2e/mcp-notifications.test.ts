import type { Client, JSONRPCNotification } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDemoGateway } from '../helpers/gateway-fixture.js';
import type { DemoGateway } from '../helpers/gateway-fixture.js';
import { connectMcp, openRawSession, rawMcpPost, text } from '../helpers/mcp-client.js';
import { addAgent } from '../helpers/agents.js';

// What reaches an agent's session outside the answers to its requests, through the real gateway
// from the real server-everything: the GET stream, tools/list_changed, progress, upstream log
// messages and resource updates, each only to the sessions that may see them.

let g: DemoGateway;
let url: string;
let serverId: string;
let agent: string;
let bystander: string;
const clients: Client[] = [];

const TOOLS = {
  longOp: { tool: 'trigger-long-running-operation', id: 'everything/long-op', class: 'read' },
  updates: { tool: 'toggle-subscriber-updates', id: 'everything/updates', class: 'read' },
  tiny: { tool: 'get-tiny-image', id: 'everything/tiny', class: 'read' },
} as const;
const DOC = 'demo://resource/static/document/architecture.md';

beforeAll(async () => {
  g = await startDemoGateway({ listen: true });
  url = `${g.url!}/mcp`;
  serverId = (await g.gateway.mcp.list('acme')).find((s) => s.name === 'everything')!.id;
  for (const b of Object.values(TOOLS)) {
    const { descriptor } = await g.gateway.mcp.bind('acme', serverId, 'test', {
      tool: b.tool,
      class: b.class,
      descriptor: { id: b.id, version: '1.0.0' },
    });
    await g.gateway.registry.applyEvents(
      'acme',
      [
        {
          id: `test:${b.id}@1.0.0`,
          type: 'AssetReleasePublished',
          data: { assetId: b.id, version: '1.0.0', descriptor, inFlightPolicy: 'finish' },
        },
      ],
      'test',
    );
  }
  const v = (id: string) => ({ id, version: '1.0.0' });
  agent = (
    await addAgent(g, 'notified', [
      v('everything/echo'),
      v('everything/toggle-simulated-logging'),
      ...Object.values(TOOLS).map((b) => v(b.id)),
    ])
  ).token;
  // Same tenant, no tool of server-everything: it must hear nothing of it.
  bystander = (await addAgent(g, 'bystander', [v('demo/echo')])).token;
});
afterAll(async () => {
  await Promise.allSettled(clients.map((c) => c.close()));
  await g?.close();
});

/** A session of the official SDK client, with every notification it is sent recorded. */
async function session(token = agent): Promise<{ client: Client; got: JSONRPCNotification[] }> {
  const { client } = await connectMcp(url, token);
  clients.push(client);
  const got: JSONRPCNotification[] = [];
  client.fallbackNotificationHandler = (n) => {
    got.push({ jsonrpc: '2.0', ...n });
    return Promise.resolve();
  };
  for (const method of [
    'notifications/tools/list_changed',
    'notifications/message',
    'notifications/resources/updated',
  ] as const)
    client.setNotificationHandler(method, (n) => {
      got.push({ jsonrpc: '2.0', ...n });
    });
  return { client, got };
}

/** Polls until `f` is true (no fixed sleeps); fails after 15 s. */
async function until(what: string, f: () => boolean): Promise<void> {
  for (let i = 0; i < 300; i++) {
    if (f()) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`timed out waiting for ${what}`);
}

const of = (got: JSONRPCNotification[], method: string) => got.filter((n) => n.method === method);

/** Opens the standalone stream by hand: the answer, not yet read. */
async function rawGet(sessionId: string | undefined, token = agent): Promise<Response> {
  return fetch(url, {
    headers: {
      authorization: `Bearer ${token}`,
      accept: 'text/event-stream',
      'mcp-protocol-version': '2025-11-25',
      ...(sessionId ? { 'mcp-session-id': sessionId } : {}),
    },
  });
}

/** A session opened by hand (initialize, initialized), without a stream yet: its id. */
const rawSession = (token: string) => openRawSession(rawMcpPost(url, token));

describe('GET /mcp: the session stream', () => {
  it('is refused without a session, and a second one of a session is refused', async () => {
    const none = await rawGet(undefined);
    expect(none.status).toBe(400);
    expect(await none.text()).toMatch(/Mcp-Session-Id is required/);
    const { transport } = await connectMcp(url, agent);
    // The SDK client opened the session's stream already: one per session.
    const second = await rawGet(transport.sessionId);
    expect(second.status).toBe(409);
    await second.body?.cancel();
    await transport.close();
  });

  it('ends when the token of its session is revoked', async () => {
    const { token } = await addAgent(g, 'short-lived', [{ id: 'demo/echo', version: '1.0.0' }]);
    const res = await rawGet(await rawSession(token), token);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/text\/event-stream/);
    const auth = g.gateway.directory.verify(token);
    if (!auth.ok) throw new Error(auth.message);
    await g.gateway.directory.tokens.revoke('acme', auth.token.id, null, 'test', 'test');
    // The body ends (rather than hanging): the stream was closed with the session.
    expect(await res.text()).toContain(': stream open');
  });
});

describe('tools/list_changed', () => {
  it('is declared, and sent to a session whose visible tools changed, only to it', async () => {
    const a = await session();
    const b = await session(bystander);
    expect(a.client.getServerCapabilities()?.tools?.listChanged).toBe(true);
    const before = (await a.client.listTools()).tools.map((t) => t.name);
    expect(before).toContain('everything_tiny__1_0_0');
    const revoked = await g.inject('POST', '/v1/events', {
      token: g.tokens.admin,
      body: {
        id: 'test:revoke/everything/tiny@1.0.0',
        type: 'AssetReleaseRevoked',
        data: { assetId: TOOLS.tiny.id, version: '1.0.0', reason: 'test' },
      },
    });
    expect(revoked.status, JSON.stringify(revoked.body)).toBe(200);
    await until('list_changed', () => of(a.got, 'notifications/tools/list_changed').length > 0);
    const after = (await a.client.listTools()).tools.map((t) => t.name);
    expect(after).not.toContain('everything_tiny__1_0_0');
    expect(after.length).toBe(before.length - 1);
    // The bystander's tools did not change: it was told nothing.
    await b.client.ping();
    expect(of(b.got, 'notifications/tools/list_changed')).toEqual([]);
  });
});

describe('progress', () => {
  it("forwards the upstream's progress on the call's own stream when the agent asks", async () => {
    const { client } = await session();
    const seen: { progress: number; total?: number }[] = [];
    const r = await client.callTool(
      { name: 'everything_long-op__1_0_0', arguments: { duration: 0.3, steps: 3 } },
      { onprogress: (p) => seen.push({ progress: p.progress, total: p.total }) },
    );
    expect(r.isError, text(r)).toBeFalsy();
    // All of them, the last too: server-everything sends it right before its answer, so the
    // gateway often reads both at once (the SDK client would drop it then; the gateway does not).
    expect(seen).toEqual([
      { progress: 1, total: 3 },
      { progress: 2, total: 3 },
      { progress: 3, total: 3 },
    ]);
  });
});

describe('logging and resource subscriptions', () => {
  it('forwards log messages at the level each session set, to sessions that reach the server', async () => {
    const debug = await session();
    const quiet = await session();
    const other = await session(bystander);
    expect(debug.client.getServerCapabilities()?.logging).toBeDefined();
    await debug.client.setLoggingLevel('debug');
    await quiet.client.setLoggingLevel('error');
    await other.client.setLoggingLevel('debug');
    // server-everything logs each subscription at level info.
    await debug.client.subscribeResource({ uri: DOC });
    await until('the info log', () =>
      of(debug.got, 'notifications/message').some((n) =>
        String((n.params as { data?: unknown }).data).includes('Subscribe Resource'),
      ),
    );
    const message = of(debug.got, 'notifications/message')[0]!.params!;
    expect(message).toMatchObject({
      level: 'info',
      _meta: { 'gatehouse/upstream': { server: serverId, name: 'everything', untrusted: true } },
    });
    await quiet.client.ping();
    await other.client.ping();
    expect(of(quiet.got, 'notifications/message')).toEqual([]);
    expect(of(other.got, 'notifications/message')).toEqual([]);
  });

  it('forwards resource updates only to the sessions that subscribed', async () => {
    const subscribed = await session();
    const not = await session();
    await subscribed.client.subscribeResource({ uri: DOC });
    // The tool starts server-everything's updates of every subscribed resource.
    const r = await not.client.callTool({ name: 'everything_updates__1_0_0', arguments: {} });
    expect(r.isError, text(r)).toBeFalsy();
    await until(
      'the update',
      () => of(subscribed.got, 'notifications/resources/updated').length > 0,
    );
    expect(of(subscribed.got, 'notifications/resources/updated')[0]!.params).toMatchObject({
      uri: DOC,
    });
    await not.client.ping();
    expect(of(not.got, 'notifications/resources/updated')).toEqual([]);
    // Stop the upstream's timer.
    await not.client.callTool({ name: 'everything_updates__1_0_0', arguments: {} });
  });

  it('subscribes again upstream when the upstream reconnects', async () => {
    const subscribed = await session();
    await subscribed.client.subscribeResource({ uri: DOC });
    const pid = await g.gateway.mcp.connectionPid('acme', serverId);
    expect(pid).not.toBeNull();
    process.kill(pid!, 'SIGKILL');
    // The next call opens a new connection, to a new process that knows no subscription but the
    // one the gateway makes again; the tool starts that process's updates.
    let r = await subscribed.client.callTool({ name: 'everything_updates__1_0_0', arguments: {} });
    for (let i = 0; i < 100 && r.isError; i++) {
      await new Promise((done) => setTimeout(done, 100));
      r = await subscribed.client.callTool({ name: 'everything_updates__1_0_0', arguments: {} });
    }
    expect(r.isError, text(r)).toBeFalsy();
    expect(await g.gateway.mcp.connectionPid('acme', serverId)).not.toBe(pid);
    await until(
      'the update after the reconnect',
      () => of(subscribed.got, 'notifications/resources/updated').length > 0,
    );
    await subscribed.client.callTool({ name: 'everything_updates__1_0_0', arguments: {} });
  });

  it('refuses a subscription to a resource no reachable server lists', async () => {
    const { client } = await session(bystander);
    await expect(client.subscribeResource({ uri: DOC })).rejects.toThrow(/No reachable upstream/);
  });
});
