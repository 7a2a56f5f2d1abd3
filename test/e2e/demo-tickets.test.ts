import { readFileSync, rmSync } from 'node:fs';
import type { Client } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { upstreamIdempotencyKey } from '../../src/executors/index.js';
import type { InvocationRecord } from '../../src/invocation/index.js';
import { startDemoGateway } from '../helpers/gateway-fixture.js';
import type { DemoGateway } from '../helpers/gateway-fixture.js';
import { connectMcp, text } from '../helpers/mcp-client.js';
import { logSize, recordsSince } from '../helpers/audit-records.js';

let g: DemoGateway;
let client: Client | undefined;
let dataDir: string;

beforeAll(async () => {
  // On SQLite whatever the run's backend: a test below counts commits through SQLite's hook.
  g = await startDemoGateway({ listen: true, backend: 'sqlite' });
  dataDir = g.dataDir;
});
afterAll(async () => {
  await client?.close();
  await g?.close();
  // The gateway restarted on it below does not own the directory.
  rmSync(dataDir, { recursive: true, force: true });
});

/** The demo ticket service's address and credentials, as it keeps them. */
function ticketService(): { port: number; apiKey: string; password: string } {
  const allowed = g.gateway.config.sandbox.egressAllow.find((a) => a.startsWith('127.0.0.1:'));
  expect(allowed, 'the ticket service is in the egress allow-list').toBeDefined();
  return { ...readState(), port: Number(allowed!.split(':')[1]) };
}

function readState(): { apiKey: string; password: string } {
  return JSON.parse(readFileSync(`${g.dataDir}/demo-tickets.json`, 'utf8')) as {
    apiKey: string;
    password: string;
  };
}

function call(tool: string, input: unknown) {
  return { tool: { id: tool, version: '1.0.0' }, input, environment: 'dev' };
}

describe('the demo ticket service, imported from its OpenAPI document', () => {
  it('lists tickets through the gateway with the brokered key, which stays out of the record', async () => {
    const { apiKey } = ticketService();
    const res = await g.invoke(g.tokens.agent, 'list-1', call('tickets/list-tickets', {}));
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.status).toBe('observed');
    expect(res.body.output).toMatchObject({ status: 200, body: [] });
    expect(JSON.stringify(res.body)).not.toContain(apiKey);
    const receipt = await g.inject('GET', `/v1/invocations/${res.body.id}/receipt`, {
      token: g.tokens.agent,
    });
    expect(JSON.stringify(receipt.body)).not.toContain(apiKey);
  });

  it('writes the key lease in two commits: issued with the running record, revoked with the outcome', async () => {
    const from = await logSize(g);
    // After each commit, the top of the log: the gateway's background work (heartbeats, sweeps)
    // may commit meanwhile too, so the call's commits are told by which records each one wrote.
    const top = g.gateway.db.raw.prepare(
      "SELECT max(idx) AS top FROM audit_records WHERE tenant = 'acme'",
    );
    const tops: number[] = [];
    const stop = g.gateway.db.onCommit(() => tops.push((top.get() as { top: number }).top));
    const res = await g.invoke(g.tokens.agent, 'list-commits', call('tickets/list-tickets', {}));
    stop();
    expect(res.body.status).toBe('observed');
    const records = (await recordsSince(g, from)).filter(
      (r) => r.record.subject === `invocation/${res.body.id}`,
    );
    const types = records.map((r) => r.record.type);
    /** The commit that wrote the record at `index`: the first after which the log reached it. */
    const commitOf = (index: number) => tops.findIndex((t) => t >= index);
    // A read holding a credential is recorded before it runs, so the issue is durable before use.
    expect(types).toEqual([
      'credential.issued',
      'invocation.running',
      'credential.revoked',
      'invocation.observed',
    ]);
    expect(records.map((r) => commitOf(r.index))).not.toContain(-1);
    expect(new Set(records.map((r) => commitOf(r.index))).size).toBe(2);
  });

  it('creates a ticket only after a reviewer approves, with one Idempotency-Key, and the board shows it', async () => {
    const body = call('tickets/create-ticket', {
      body: { title: 'printer on fire', body: 'third floor' },
    });
    const first = await g.invoke(g.tokens.agent, 'create-1', body);
    expect(first.status, JSON.stringify(first.body)).toBe(202);
    const waiting = first.body as InvocationRecord & { approvalId: string };
    expect(waiting.status).toBe('awaiting_approval');
    const before = await g.invoke(g.tokens.agent, 'list-2', call('tickets/list-tickets', {}));
    expect((before.body.output as { body: unknown[] }).body).toEqual([]);

    const approved = await g.inject('POST', `/v1/approvals/${waiting.approvalId}/approve`, {
      token: g.tokens.reviewer,
      body: {},
    });
    expect(approved.status, JSON.stringify(approved.body)).toBe(200);
    const done = await g.invoke(g.tokens.agent, 'create-1', {
      ...body,
      approvalId: waiting.approvalId,
    });
    expect(done.body.status, JSON.stringify(done.body)).toBe('observed');
    expect(done.body.output).toMatchObject({
      status: 201,
      body: { id: 'T-1', title: 'printer on fire', status: 'open' },
    });

    // The service saw one Idempotency-Key, derived by the gateway, for its one ticket.
    const { keys } = JSON.parse(readFileSync(`${g.dataDir}/demo-tickets.json`, 'utf8')) as {
      keys: [string, string][];
    };
    expect(keys).toEqual([
      [upstreamIdempotencyKey('acme', 'create-1', waiting.requestHash), 'T-1'],
    ]);
    const { port } = ticketService();
    const board = await fetch(`http://127.0.0.1:${port}/`);
    const html = await board.text();
    expect(html).toContain('<h1>Ticket board</h1>');
    expect(html).toContain('printer on fire');
  });

  it('refuses a call without the key at the service itself, and a bad ticket id at the gateway', async () => {
    const { port } = ticketService();
    const direct = await fetch(`http://127.0.0.1:${port}/api/tickets`);
    expect(direct.status).toBe(401);
    const bad = await g.invoke(
      g.tokens.agent,
      'get-bad',
      call('tickets/get-ticket', { ticketId: '../admin' }),
    );
    expect(bad.status).toBe(422);
    expect(JSON.stringify(bad.body)).toContain('ticketId');
  });

  it('signs in on the pages with the password the broker holds as tickets-password', async () => {
    const { port, password } = ticketService();
    const wrong = await fetch(`http://127.0.0.1:${port}/login`, {
      method: 'POST',
      body: new URLSearchParams({ username: 'demo', password: 'guess' }),
      redirect: 'manual',
    });
    expect(wrong.status).toBe(401);
    const right = await fetch(`http://127.0.0.1:${port}/login`, {
      method: 'POST',
      body: new URLSearchParams({ username: 'demo', password }),
      redirect: 'manual',
    });
    expect(right.status).toBe(303);
    const cookie = right.headers.get('set-cookie')!.split(';')[0]!;
    const form = await fetch(`http://127.0.0.1:${port}/tickets/new`, { headers: { cookie } });
    expect(await form.text()).toContain('id="ticket-title"');
    const secrets = (await g.gateway.secrets.list('acme')).map((s) => s.name);
    expect(secrets).toEqual(expect.arrayContaining(['tickets-api-key', 'tickets-password']));
  });

  it('lists and calls the ticket tools through /mcp, a create waiting for approval', async () => {
    ({ client } = await connectMcp(`${g.url!}/mcp`, g.tokens.agent));
    const { tools } = await client.listTools();
    const names = tools.map((t) => t.name);
    expect(names).toEqual(
      expect.arrayContaining(['tickets_list-tickets__1_0_0', 'tickets_create-ticket__1_0_0']),
    );
    const listed = await client.callTool({
      name: 'tickets_list-tickets__1_0_0',
      arguments: {},
    });
    expect(listed.isError, text(listed)).toBeFalsy();
    expect(text(listed)).toContain('printer on fire');
    const create = await client.callTool({
      name: 'tickets_create-ticket__1_0_0',
      arguments: { body: { title: 'from mcp' } },
    });
    expect(create._meta?.['gatehouse/status']).toBe('awaiting_approval');
    const approvalId = create._meta?.['gatehouse/approvalId'] as string;
    const approved = await g.inject('POST', `/v1/approvals/${approvalId}/approve`, {
      token: g.tokens.reviewer,
      body: {},
    });
    expect(approved.status, JSON.stringify(approved.body)).toBe(200);
    const resumed = await client.callTool({
      name: 'tickets_create-ticket__1_0_0',
      arguments: { body: { title: 'from mcp' } },
      _meta: { 'gatehouse/approvalId': approvalId },
    });
    expect(resumed.isError, text(resumed)).toBeFalsy();
    expect(resumed._meta?.['gatehouse/status']).toBe('observed');
    expect(text(resumed)).toContain('"title":"from mcp"');
  });
});

describe('after a restart', () => {
  it('keeps its port, its tickets and its tools', async () => {
    const before = ticketService();
    await g.stop();
    g = await startDemoGateway({ dataDir: g.dataDir, listen: true, backend: 'sqlite' });
    const after = ticketService();
    expect(after).toEqual(before);
    const res = await g.invoke(g.tokens.agent, 'list-after', call('tickets/list-tickets', {}));
    expect(res.body.status, JSON.stringify(res.body)).toBe('observed');
    expect((res.body.output as { body: { title: string }[] }).body.map((t) => t.title)).toEqual([
      'from mcp',
      'printer on fire',
    ]);
  });
});
