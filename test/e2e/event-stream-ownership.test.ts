import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, startDemoGateway } from '../helpers/gateway-fixture.js';
import type { DemoGateway } from '../helpers/gateway-fixture.js';
import { SseClient } from '../helpers/sse.js';
import type { SseFrame } from '../helpers/sse.js';

/**
 * `GET /v1/events/stream` of an agent carries the events of its own calls and of their approvals
 * only, live and replayed; people's streams carry the tenant's.
 */

let g: DemoGateway;
let second: string;
const clients: SseClient[] = [];

beforeAll(async () => {
  g = await startDemoGateway({ listen: true });
  second = (
    await g.gateway.directory.addPrincipal(
      {
        tenant: 'acme',
        name: 'second-agent',
        roles: ['agent'],
        project: 'web',
        agent: { id: 'demo-agent', version: '1.0.0' },
      },
      'test',
    )
  ).token;
}, 60_000);

afterAll(async () => {
  for (const c of clients.splice(0)) c.close();
  await g?.close();
});

async function connect(token: string, query?: string): Promise<SseClient> {
  const c = await SseClient.connect(g.url!, token, query === undefined ? {} : { query });
  clients.push(c);
  expect(c.status).toBe(200);
  return c;
}

const subjects = (frames: SseFrame[]) => frames.map((f) => [f.event, f.data.subject]);

describe("an agent's event stream", () => {
  it('carries its own calls and approvals only; another agent and the tenant’s own events never show', async () => {
    const mine = await connect(g.tokens.agent);
    const theirs = await connect(second);
    const operator = await connect(g.tokens.operator);

    const echo = await g.invoke(g.tokens.agent, 'own-1', call('demo/echo', { message: 'mine' }));
    expect(echo.status).toBe(200);
    const gated = await g.invoke(
      g.tokens.agent,
      'own-2',
      call('demo/propose-change', { title: 'mine', diff: '-a\n+b' }),
    );
    expect(gated.status).toBe(202);
    const approved = await g.inject('POST', `/v1/approvals/${gated.body.approvalId}/approve`, {
      token: g.tokens.reviewer,
      body: { reason: 'ok' },
    });
    expect(approved.status).toBe(200);
    const other = await g.invoke(second, 'other-1', call('demo/echo', { message: 'theirs' }));
    expect(other.status).toBe(200);

    const own = [
      ['ToolInvocationRequested', `invocation/${echo.body.id}`],
      ['ToolInvocationCompleted', `invocation/${echo.body.id}`],
      ['ToolInvocationRequested', `invocation/${gated.body.id}`],
      ['ApprovalRequested', `invocation/${gated.body.id}`],
      ['ApprovalDecided', `approval/${gated.body.approvalId}`],
    ];
    const others = [
      ['ToolInvocationRequested', `invocation/${other.body.id}`],
      ['ToolInvocationCompleted', `invocation/${other.body.id}`],
    ];
    expect(subjects(await mine.take(5))).toEqual(own);
    expect(subjects(await theirs.take(2))).toEqual(others);
    // The operator sees the tenant's: both agents' calls, in order.
    expect(subjects(await operator.take(7))).toEqual([...own, ...others]);

    // Nothing else arrives on the agents' streams: not the other agent's calls, after the fact.
    expect(await mine.drain(300)).toEqual([]);
    expect(await theirs.drain(300)).toEqual([]);

    // A replay from the start is filtered the same way: no event of the tenant's lifecycle (the
    // demo's descriptor activations), none of the other agent's.
    const replay = await connect(second, 'after=0');
    expect(subjects(await replay.take(2))).toEqual(others);
    expect(await replay.drain(300)).toEqual([]);
    const all = await connect(g.tokens.admin, 'after=0');
    const everything = await all.drain(1500);
    expect(everything.some((f) => f.event === 'DescriptorActivated')).toBe(true);
    expect(subjects(everything).slice(-7)).toEqual([...own, ...others]);
  });
});
