import { createServer } from 'node:http';
import type { IncomingHttpHeaders, Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { verifyReceipt } from '../../src/audit/index.js';
import type { JwkSet } from '../../src/audit/index.js';
import type { InvocationRecord } from '../../src/invocation/index.js';
import { startDemoGateway } from '../helpers/gateway-fixture.js';
import type { DemoGateway, ErrorBody } from '../helpers/gateway-fixture.js';

/** What the ticket service saw: one entry per request it read whole. */
const seen: { method: string; url: string; headers: IncomingHttpHeaders; body: string }[] = [];
/** Resets the connection of the next POST after reading it (the effect may have happened). */
let dropNextPost = false;
let server: Server;
let port: number;

beforeAll(async () => {
  server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      seen.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers, body });
      if (req.method === 'POST' && dropNextPost) {
        dropNextPost = false;
        req.socket.destroy();
        return;
      }
      if (req.method === 'POST') {
        res.writeHead(201, { 'content-type': 'application/json', location: '/tickets/T-1' });
        res.end(JSON.stringify({ id: 'T-1', ...(JSON.parse(body) as object) }));
        return;
      }
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ id: req.url?.split('/').pop(), title: 'printer on fire' }));
    });
  });
  await new Promise<void>((ok) => server.listen(0, '127.0.0.1', () => ok()));
  port = (server.address() as AddressInfo).port;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise<void>((ok) => server.close(() => ok()));
});

function tool(id: string, execution: Record<string, unknown>, cls: string): unknown {
  return {
    id,
    version: '1.0.0',
    kind: 'http',
    description: id,
    inputSchema: {
      type: 'object',
      additionalProperties: false,
      properties: {
        id: { type: 'string' },
        ticket: { type: 'object', properties: { title: { type: 'string' } } },
      },
    },
    sideEffect: { class: cls },
    execution,
  };
}

function publish(g: DemoGateway, id: string, descriptor: unknown) {
  return g.inject<ErrorBody>('POST', '/v1/events', {
    token: g.tokens.admin,
    body: [
      {
        id: `test:${id}@1.0.0`,
        type: 'AssetReleasePublished',
        data: { assetId: id, version: '1.0.0', descriptor },
      },
    ],
  });
}

let g: DemoGateway;
let agent: string;
beforeEach(async () => {
  seen.length = 0;
  dropNextPost = false;
  g = await startDemoGateway({ sandbox: { egressAllow: [`127.0.0.1:${port}`] } });
  const base = `http://127.0.0.1:${port}`;
  for (const [id, d] of [
    [
      'helpdesk/create-ticket',
      tool(
        'helpdesk/create-ticket',
        { method: 'POST', url: `${base}/tickets`, body: '/ticket' },
        'workspace-write',
      ),
    ],
    [
      'helpdesk/get-ticket',
      tool('helpdesk/get-ticket', { method: 'GET', url: `${base}/tickets/{id}` }, 'read'),
    ],
  ] as const)
    expect((await publish(g, id, d)).status).toBe(200);
  const release = await g.inject('POST', '/v1/events', {
    token: g.tokens.admin,
    body: [
      {
        id: 'test:agent/ticket-agent@1.0.0',
        type: 'AgentReleasePublished',
        data: {
          agentId: 'ticket-agent',
          version: '1.0.0',
          closure: [
            { id: 'helpdesk/create-ticket', version: '1.0.0' },
            { id: 'helpdesk/get-ticket', version: '1.0.0' },
          ],
          policy: { maxClass: 'workspace-write' },
        },
      },
    ],
  });
  expect(release.status).toBe(200);
  agent = (
    await g.gateway.directory.addPrincipal(
      {
        tenant: 'acme',
        name: 'ticket-agent',
        roles: ['agent'],
        project: 'web',
        agent: { id: 'ticket-agent', version: '1.0.0' },
      },
      'test',
    )
  ).token;
});
afterEach(async () => {
  await g.close();
});

function call(id: string, input: unknown): unknown {
  return { tool: { id, version: '1.0.0' }, input, environment: 'dev' };
}

describe('http tools through the gateway', () => {
  it('a read call is observed, its egress decision on the record and in the signed receipt', async () => {
    const res = await g.invoke(agent, 'get-1', call('helpdesk/get-ticket', { id: 'T-7' }));
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body).toMatchObject({
      status: 'observed',
      output: { status: 200, body: { id: 'T-7', title: 'printer on fire' } },
    });
    expect(seen.map((s) => `${s.method} ${s.url}`)).toEqual(['GET /tickets/T-7']);
    expect(res.body.egress).toMatchObject([
      { method: 'GET', host: '127.0.0.1', port, allowed: true, address: '127.0.0.1' },
    ]);
    const jwks = (await g.inject('GET', '/v1/receipt-keys')).body as JwkSet;
    const envelope = (
      await g.inject('GET', `/v1/invocations/${res.body.id}/receipt`, { token: g.tokens.operator })
    ).body;
    const verdict = verifyReceipt(envelope, jwks);
    if (!verdict.ok) throw new Error(verdict.reason);
    expect(verdict.statement.predicate.egress).toMatchObject([
      { host: '127.0.0.1', allowed: true },
    ]);
  });

  it('a write whose connection resets is uncertain, 409 on retry; after a denial attempt 2 sends the same Idempotency-Key', async () => {
    dropNextPost = true;
    const body = call('helpdesk/create-ticket', { ticket: { title: 'printer on fire' } });
    const first = await g.invoke(agent, 'create-1', body);
    expect(first.status, JSON.stringify(first.body)).toBe(200);
    expect(first.body).toMatchObject({ status: 'uncertain', error: { code: 'CONNECTION_LOST' } });
    const id = first.body.id;
    expect(seen).toHaveLength(1);
    const key = seen[0]!.headers['idempotency-key'];
    expect(key).toMatch(/^gatehouse-[0-9a-f]{48}$/);

    const blocked = await g.invoke(agent, 'create-1', body);
    expect(blocked.status).toBe(409);
    expect((blocked.body as unknown as ErrorBody).error.code).toBe('EFFECT_UNCERTAIN');
    expect(seen).toHaveLength(1);

    const denied = await g.inject<InvocationRecord>('POST', `/v1/invocations/${id}/resolve`, {
      token: g.tokens.operator,
      body: { effect: 'denied', evidence: 'the ticket service has no ticket from this call' },
    });
    expect(denied.status).toBe(200);
    const retry = await g.invoke(agent, 'create-1', body);
    expect(retry.status, JSON.stringify(retry.body)).toBe(200);
    expect(retry.body).toMatchObject({
      status: 'observed',
      attempt: 2,
      previousAttempt: id,
      output: { status: 201, headers: { location: '/tickets/T-1' }, body: { id: 'T-1' } },
    });
    expect(seen).toHaveLength(2);
    expect(seen[1]!.headers['idempotency-key']).toBe(key);
    expect(seen[1]!.body).toBe('{"title":"printer on fire"}');
  });

  it('refuses at publication a URL template naming what the input schema cannot have, naming the field', async () => {
    const res = await publish(
      g,
      'helpdesk/bad',
      tool('helpdesk/bad', { method: 'GET', url: `http://127.0.0.1:${port}/t/{ticketId}` }, 'read'),
    );
    expect(res.status).toBeGreaterThanOrEqual(400);
    expect(res.status).toBeLessThan(500);
    expect(JSON.stringify(res.body)).toMatch(
      /execution\.url names the variable \{ticketId\}, which the input schema does not declare/,
    );
  });
});
