import { afterEach, describe, expect, it } from 'vitest';
import { demoAgentEvent, demoToolEvents } from '../../src/app/index.js';
import type { StoredEvent } from '../../src/core/index.js';
import { call, startDemoGateway } from '../helpers/gateway-fixture.js';
import type { DemoGateway, ErrorBody } from '../helpers/gateway-fixture.js';
import { SseClient } from '../helpers/sse.js';
import type { SseFrame } from '../helpers/sse.js';

let g: DemoGateway | undefined;
const clients: SseClient[] = [];
afterEach(async () => {
  for (const c of clients.splice(0)) c.close();
  await g?.close();
  g = undefined;
});

async function connect(
  d: DemoGateway,
  token: string,
  o: Parameters<typeof SseClient.connect>[2] = {},
): Promise<SseClient> {
  const c = await SseClient.connect(d.url!, token, o);
  clients.push(c);
  expect(c.status).toBe(200);
  return c;
}

function outbox(d: DemoGateway, tenant: string, after: number): Promise<StoredEvent[]> {
  return d.gateway.storage.outbox.after(tenant, after, 10_000);
}

/** What a frame must say about a stored event. */
function asFrame(e: StoredEvent): SseFrame {
  return {
    id: e.seq,
    event: e.type,
    data: { id: e.seq, type: e.type, subject: e.subject, at: e.at, data: e.data },
  };
}

function increasing(frames: SseFrame[]): boolean {
  return frames.every((f, i) => i === 0 || f.id > frames[i - 1]!.id);
}

async function echo(d: DemoGateway, key: string): Promise<string> {
  const res = await d.invoke(d.tokens.agent, key, call('demo/echo', { message: key }));
  expect(res.status).toBe(200);
  return res.body.id;
}

describe('GET /v1/events/stream', () => {
  it('delivers every event once, in order, and resumes after a reconnect with Last-Event-ID', async () => {
    g = await startDemoGateway({ listen: true });
    const start = await g.gateway.storage.outbox.latest('acme');
    expect(start).toBeGreaterThan(0); // the demo's DescriptorActivated events
    const live = await connect(g, g.tokens.agent);

    // Without Last-Event-ID the stream starts at what happens next.
    const e1 = await echo(g, 'one');
    const proposal = await g.invoke(
      g.tokens.agent,
      'p-1',
      call('demo/propose-change', { title: 't', diff: 'd' }),
    );
    expect(proposal.status).toBe(202);
    const approve = await g.inject('POST', `/v1/approvals/${proposal.body.approvalId}/approve`, {
      token: g.tokens.reviewer,
      body: {},
    });
    expect(approve.status).toBe(200);

    const first = await live.take(5);
    expect(first.map((f) => [f.event, f.data.subject])).toEqual([
      ['ToolInvocationRequested', `invocation/${e1}`],
      ['ToolInvocationCompleted', `invocation/${e1}`],
      ['ToolInvocationRequested', `invocation/${proposal.body.id}`],
      ['ApprovalRequested', `invocation/${proposal.body.id}`],
      ['ApprovalDecided', `approval/${proposal.body.approvalId}`],
    ]);
    expect(increasing(first)).toBe(true);
    expect(first[0]!.id).toBeGreaterThan(start);
    expect(first).toEqual((await outbox(g, 'acme', start)).map(asFrame));
    expect(await live.drain(150)).toEqual([]);
    const lastSeen = first.at(-1)!.id;

    // Disconnect; more happens meanwhile.
    live.close();
    const e2 = await echo(g, 'two');
    const resumed = await g.invoke(g.tokens.agent, 'p-1', {
      ...(call('demo/propose-change', { title: 't', diff: 'd' }) as object),
      approvalId: proposal.body.approvalId,
    });
    expect(resumed.body.status).toBe('observed');
    const e3 = await echo(g, 'three');
    const missed = await outbox(g, 'acme', lastSeen);
    expect(missed.length).toBe(5);

    const back = await connect(g, g.tokens.agent, { lastEventId: lastSeen });
    const got = await back.take(missed.length);
    expect(got).toEqual(missed.map(asFrame));
    expect(got.map((f) => [f.event, f.data.subject])).toEqual([
      ['ToolInvocationRequested', `invocation/${e2}`],
      ['ToolInvocationCompleted', `invocation/${e2}`],
      ['ToolInvocationCompleted', `invocation/${proposal.body.id}`],
      ['ToolInvocationRequested', `invocation/${e3}`],
      ['ToolInvocationCompleted', `invocation/${e3}`],
    ]);
    expect(await back.drain(150)).toEqual([]);

    // Still live after the catch-up.
    const e4 = await echo(g, 'four');
    const more = await back.take(2);
    expect(more.map((f) => [f.event, f.data.subject])).toEqual([
      ['ToolInvocationRequested', `invocation/${e4}`],
      ['ToolInvocationCompleted', `invocation/${e4}`],
    ]);
    expect(more[0]!.id).toBeGreaterThan(got.at(-1)!.id);

    // ?after=0 replays the tenant's whole outbox.
    const replay = await connect(g, g.tokens.operator, { query: 'after=0' });
    const all = await outbox(g, 'acme', 0);
    expect(await replay.take(all.length)).toEqual(all.map(asFrame));
    expect(await replay.drain(100)).toEqual([]);
  }, 60_000);

  it('delivers events written concurrently exactly once', async () => {
    g = await startDemoGateway({ listen: true });
    const start = await g.gateway.storage.outbox.latest('acme');
    const live = await connect(g, g.tokens.agent);
    await Promise.all(Array.from({ length: 20 }, (_, i) => echo(g!, `burst-${i}`)));
    const stored = await outbox(g, 'acme', start);
    expect(stored).toHaveLength(40);
    const frames = await live.take(40);
    expect(frames).toEqual(stored.map(asFrame));
    expect(new Set(frames.map((f) => f.id)).size).toBe(40);
    expect(await live.drain(150)).toEqual([]);
  });

  it("shows a tenant none of another tenant's events", async () => {
    g = await startDemoGateway({ listen: true });
    const d = g.gateway.directory;
    await d.ensureTenant('globex', 'Globex', 'test');
    const { token: gAdmin } = await d.addPrincipal(
      { tenant: 'globex', name: 'globex-admin', roles: ['admin'] },
      'test',
    );
    const theirs = await connect(g, gAdmin, { query: 'after=0' });
    const ours = await connect(g, g.tokens.operator);
    expect(await theirs.drain(100)).toEqual([]);

    // acme activity, then globex activity (its own tool publications).
    await echo(g, 'acme-only');
    const published = await g.inject('POST', '/v1/events', {
      token: gAdmin,
      body: [...demoToolEvents, demoAgentEvent([])],
    });
    expect(published.status).toBe(200);
    const globexEvents = await outbox(g, 'globex', 0);
    expect(globexEvents.length).toBeGreaterThan(0);

    const seen = await theirs.take(globexEvents.length);
    expect(seen).toEqual(globexEvents.map(asFrame));
    expect(await theirs.drain(150)).toEqual([]);
    const acmeIds = new Set((await outbox(g, 'acme', 0)).map((e) => e.seq));
    expect(seen.some((f) => acmeIds.has(f.id))).toBe(false);

    // acme's stream got its two events and none of globex's.
    const mine = await ours.take(2);
    expect(mine.map((f) => f.event)).toEqual([
      'ToolInvocationRequested',
      'ToolInvocationCompleted',
    ]);
    expect(await ours.drain(150)).toEqual([]);

    // Even asking to resume from an id of the other tenant shows only one's own.
    const fromTheirs = await connect(g, gAdmin, { lastEventId: 0 });
    expect(await fromTheirs.take(globexEvents.length)).toEqual(globexEvents.map(asFrame));
    expect(await fromTheirs.drain(100)).toEqual([]);
  });

  it('caps streams per principal (429), per tenant (429) and per gateway (503), and counts them', async () => {
    g = await startDemoGateway({
      listen: true,
      config: { streams: { maxClientsPerPrincipal: 2, maxClientsPerTenant: 3, maxClients: 4 } },
    });
    const d = g.gateway.directory;
    await d.ensureTenant('globex', 'Globex', 'test');
    const { token: other } = await d.addPrincipal(
      { tenant: 'globex', name: 'globex-admin', roles: ['admin'] },
      'test',
    );
    const refusal = async (token: string) => {
      const res = await fetch(`${g!.url!}/v1/events/stream`, {
        headers: { authorization: `Bearer ${token}` },
      });
      return { status: res.status, body: (await res.json()) as ErrorBody };
    };
    await connect(g, g.tokens.operator);
    await connect(g, g.tokens.operator);
    const mine = await refusal(g.tokens.operator);
    expect(mine.status).toBe(429);
    expect(mine.body.error).toMatchObject({
      code: 'QUOTA_EXCEEDED',
      details: { scope: 'principal', limit: 2 },
    });
    await connect(g, g.tokens.reviewer);
    const tenant = await refusal(g.tokens.admin);
    expect(tenant.status).toBe(429);
    expect(tenant.body.error.details).toEqual({ scope: 'tenant', limit: 3 });
    await connect(g, other);
    const gateway = await refusal(other);
    expect(gateway.status).toBe(503);
    expect(gateway.body.error).toMatchObject({
      code: 'CAPACITY_EXHAUSTED',
      details: { scope: 'gateway', limit: 4 },
    });
    const gauge = async () =>
      Number(
        /^gatehouse_event_stream_clients (\d+)/m.exec(
          (await g!.inject<string>('GET', '/metrics')).body,
        )?.[1],
      );
    expect(await gauge()).toBe(4);
    // A closed stream frees its place.
    clients.shift()!.close();
    await expect.poll(gauge).toBe(3);
    await connect(g, g.tokens.admin);
  });

  it('refuses a request without a token, and answers HEAD without opening a stream', async () => {
    g = await startDemoGateway({ listen: true });
    const res = await fetch(`${g.url!}/v1/events/stream`);
    expect(res.status).toBe(401);
    await res.body?.cancel();
    const head = await fetch(`${g.url!}/v1/events/stream`, {
      method: 'HEAD',
      headers: { authorization: `Bearer ${g.tokens.operator}` },
    });
    expect(head.status).toBe(200);
    expect(head.headers.get('content-type')).toMatch(/^text\/event-stream/);
    const metrics = (await g.inject<string>('GET', '/metrics')).body;
    expect(metrics).toMatch(/^gatehouse_event_stream_clients 0$/m);
  });
});
