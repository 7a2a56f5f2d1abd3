import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { Approval } from '../../src/approvals/index.js';
import { demoAgentEvent, demoToolEvents } from '../../src/app/index.js';
import { verifyReceipt } from '../../src/audit/index.js';
import type { JwkSet } from '../../src/audit/index.js';
import { ManualClock } from '../../src/core/index.js';
import type { StoredEvent } from '../../src/core/index.js';
import type { InvocationRecord } from '../../src/invocation/index.js';
import { defaultTenantPolicy } from '../../src/policy/index.js';
import { call, startDemoGateway } from '../helpers/gateway-fixture.js';
import type { DemoGateway, ErrorBody } from '../helpers/gateway-fixture.js';

/**
 * The gateway of the tests that need no configuration of their own, started once for the file:
 * each test uses idempotency keys and approvals of its own, and counts executions, events and
 * listings from what was there when it began.
 */
let shared: DemoGateway;
beforeAll(async () => {
  shared = await startDemoGateway();
});
afterAll(async () => {
  await shared?.close();
});

/** A gateway of one test's own configuration, closed after it. */
let own: DemoGateway | undefined;
afterEach(async () => {
  await own?.close();
  own = undefined;
});

const PROPOSE = 'demo.propose-change';
const DAY = 24 * 3600 * 1000;

function propose(title: string, diff = '-teh\n+the\n'): unknown {
  return call('demo/propose-change', { title, diff });
}

function idOf(d: DemoGateway, token: string): string {
  const p = d.gateway.directory.authenticate(token);
  if (!p) throw new Error('unknown token');
  return p.id;
}

/** The tenant's outbox events after position `since` (0: all of them). */
async function outbox(d: DemoGateway, since = 0, tenant = 'acme'): Promise<StoredEvent[]> {
  return d.gateway.storage.outbox.after(tenant, since, 10_000);
}

/** The position of the tenant's latest outbox event. */
const outboxEnd = (d: DemoGateway, tenant = 'acme'): Promise<number> =>
  d.gateway.storage.outbox.latest(tenant);

/** How many times demo/propose-change runs from now on. */
function proposeRuns(d: DemoGateway): () => number {
  const before = d.executions(PROPOSE);
  return () => d.executions(PROPOSE) - before;
}

async function approval(d: DemoGateway, id: string, token = d.tokens.reviewer): Promise<Approval> {
  const res = await d.inject<Approval>('GET', `/v1/approvals/${id}`, { token });
  expect(res.status).toBe(200);
  return res.body;
}

async function decide(
  d: DemoGateway,
  token: string,
  id: string,
  decision: 'approve' | 'reject',
  reason?: string,
) {
  return d.inject<Approval & ErrorBody>('POST', `/v1/approvals/${id}/${decision}`, {
    token,
    body: reason === undefined ? {} : { reason },
  });
}

/** Invokes and expects the call to wait for approval; returns its record. */
async function awaiting(
  d: DemoGateway,
  key: string,
  body: unknown,
  token = d.tokens.agent,
): Promise<InvocationRecord & { approvalId: string }> {
  const res = await d.invoke(token, key, body);
  expect(res.status, JSON.stringify(res.body)).toBe(202);
  expect(res.body.status).toBe('awaiting_approval');
  expect(typeof res.body.approvalId).toBe('string');
  return res.body as InvocationRecord & { approvalId: string };
}

function resume(d: DemoGateway, key: string, body: unknown, approvalId: string, token?: string) {
  return d.invoke(token ?? d.tokens.agent, key, { ...(body as object), approvalId });
}

async function addReviewer(d: DemoGateway, name: string): Promise<string> {
  const { token } = await d.gateway.directory.addPrincipal(
    { tenant: 'acme', name, roles: ['reviewer'] },
    'test',
  );
  return token;
}

async function treeSize(d: DemoGateway): Promise<number> {
  const cp = await d.inject<{ treeSize: number }>('GET', '/v1/audit/checkpoint', {
    token: d.tokens.operator,
  });
  expect(cp.status).toBe(200);
  return cp.body.treeSize;
}

describe('a shared-write call', () => {
  it('waits for approval, runs once when resumed with the same key, and names the approval in its receipt', async () => {
    const g = shared;
    const runs = proposeRuns(g);
    const since = await outboxEnd(g);
    const listPending = () =>
      g.inject<{ approvals: Approval[] }>('GET', '/v1/approvals?status=pending', {
        token: g.tokens.reviewer,
      });
    const pendingBefore = (await listPending()).body.approvals.map((a) => a.id);
    const body = propose('Fix a typo');
    const waiting = await awaiting(g, 'pc-1', body);
    expect(waiting.effectiveClass).toBe('shared-write');
    const stage = waiting.trace.find((t) => t.stage === 'approval');
    expect(stage).toMatchObject({ decision: 'suspend' });
    expect(waiting.trace.map((t) => t.stage)).not.toContain('execute');
    expect(waiting.trace.map((t) => t.stage)).not.toContain('credentials');
    expect(waiting.output).toBeUndefined();
    expect(runs()).toBe(0);

    const requested = (await outbox(g, since)).filter((e) => e.type === 'ApprovalRequested');
    expect(requested).toHaveLength(1);
    expect(requested[0]!.data).toMatchObject({
      approvalId: waiting.approvalId,
      invocationId: waiting.id,
      requestHash: waiting.requestHash,
    });

    // What the reviewer sees: the exact request it approves.
    const pending = await listPending();
    expect(pending.status).toBe(200);
    expect(pending.body.approvals.map((a) => a.id).sort()).toEqual(
      [...pendingBefore, waiting.approvalId].sort(),
    );
    const a0 = pending.body.approvals.find((a) => a.id === waiting.approvalId)!;
    expect(a0).toMatchObject({
      status: 'pending',
      invocationId: waiting.id,
      requestHash: waiting.requestHash,
      tool: { id: 'demo/propose-change', version: '1.0.0' },
      descriptorDigest: waiting.tool.descriptorDigest,
      requestedBy: idOf(g, g.tokens.agent),
      input: { title: 'Fix a typo', diff: '-teh\n+the\n' },
      quorum: 1,
      decisions: [],
    });
    expect(Date.parse(a0.expiresAt) - Date.parse(a0.requestedAt)).toBe(DAY);

    // Resuming before the decision is refused and runs nothing.
    const early = await resume(g, 'pc-1', body, waiting.approvalId);
    expect(early.status).toBe(409);
    expect((early.body as unknown as ErrorBody).error.code).toBe('APPROVAL_PENDING');
    expect(runs()).toBe(0);

    const approved = await decide(
      g,
      g.tokens.reviewer,
      waiting.approvalId,
      'approve',
      'looks right',
    );
    expect(approved.status, JSON.stringify(approved.body)).toBe(200);
    expect(approved.body).toMatchObject({ status: 'approved', version: 2 });
    expect(approved.body.decidedAt).toEqual(expect.any(String));
    const decided = (await outbox(g, since)).filter((e) => e.type === 'ApprovalDecided');
    expect(decided).toHaveLength(1);
    expect(decided[0]!.data).toMatchObject({
      approvalId: waiting.approvalId,
      decision: 'approve',
      status: 'approved',
      reviewer: idOf(g, g.tokens.reviewer),
    });
    expect(runs()).toBe(0);

    // Ten concurrent resumes: one execution, one record.
    const answers = await Promise.all(
      Array.from({ length: 10 }, () => resume(g, 'pc-1', body, waiting.approvalId)),
    );
    for (const a of answers) {
      expect(a.status, JSON.stringify(a.body)).toBe(200);
      expect(a.body).toMatchObject({ id: waiting.id, status: 'observed' });
    }
    expect(new Set(answers.map((a) => JSON.stringify(a.body))).size).toBe(1);
    expect(runs()).toBe(1);
    const done = answers[0]!.body;
    expect(done.output).toMatchObject({ title: 'Fix a typo' });
    const reviewerId = idOf(g, g.tokens.reviewer);
    expect(done.approval).toEqual({
      id: waiting.approvalId,
      approvers: [{ principal: reviewerId, at: approved.body.decidedAt }],
      decidedAt: approved.body.decidedAt,
    });
    expect(done.trace.find((t) => t.stage === 'approval' && t.decision === 'pass')?.reason).toMatch(
      /approved by/,
    );

    // Later retries replay the record; the approval is consumed.
    const again = await resume(g, 'pc-1', body, waiting.approvalId);
    expect(again.status).toBe(200);
    expect(again.body.id).toBe(waiting.id);
    expect(runs()).toBe(1);
    expect((await approval(g, waiting.approvalId)).status).toBe('consumed');

    const jwks = (await g.inject('GET', '/v1/receipt-keys')).body as JwkSet;
    const envelope = (
      await g.inject('GET', `/v1/invocations/${done.id}/receipt`, { token: g.tokens.agent })
    ).body;
    const verdict = verifyReceipt(envelope, jwks);
    if (!verdict.ok) throw new Error(verdict.reason);
    expect(verdict.statement.predicate.approval).toEqual(done.approval);
    expect(verdict.statement.predicate.status).toBe('observed');
  });

  it('with one character of input changed needs its own approval; the old one is refused as stale', async () => {
    const g = shared;
    const runs = proposeRuns(g);
    const body = propose('Rename a variable', '-let x\n+let y\n');
    const changed = propose('Rename a variable', '-let x\n+let z\n');
    const first = await awaiting(g, 'stale-1', body);
    expect((await decide(g, g.tokens.reviewer, first.approvalId, 'approve')).status).toBe(200);
    const before = await approval(g, first.approvalId);
    const size = await treeSize(g);

    const stale = await resume(g, 'stale-2', changed, first.approvalId);
    expect(stale.status).toBe(409);
    const err = (stale.body as unknown as ErrorBody).error;
    expect(err.code).toBe('APPROVAL_STALE');
    expect(err.message).toMatch(/stale/);
    expect(err.message).toMatch(/request hash/);
    expect(err.message).toContain(first.requestHash);
    expect(err.details).toMatchObject({ approvedRequestHash: first.requestHash });
    expect(err.details.requestHash).not.toBe(first.requestHash);
    // Nothing changed: the approval, the log, the executions.
    expect(await approval(g, first.approvalId)).toEqual(before);
    expect(await treeSize(g)).toBe(size);
    expect(runs()).toBe(0);

    // The changed call, without the old approval, gets its own.
    const second = await awaiting(g, 'stale-2', changed);
    expect(second.approvalId).not.toBe(first.approvalId);
    expect(second.requestHash).toBe(err.details.requestHash);
    expect(second.id).not.toBe(first.id);

    // Under its own key, too, the approval of another request is refused.
    const crossed = await resume(g, 'stale-2', changed, first.approvalId);
    expect(crossed.status).toBe(409);
    expect((crossed.body as unknown as ErrorBody).error.code).toBe('APPROVAL_STALE');
    expect(await approval(g, first.approvalId)).toEqual(before);

    // The original resumes fine.
    const ok = await resume(g, 'stale-1', body, first.approvalId);
    expect(ok.status).toBe(200);
    expect(ok.body.status).toBe('observed');
    expect(runs()).toBe(1);
  });
});

describe('deciding an approval', () => {
  it('refuses agents, non-reviewers, the requester, missing ids and reasonless rejections, changing nothing', async () => {
    const g = shared;
    const runs = proposeRuns(g);
    const waiting = await awaiting(g, 'refuse-1', propose('Refusals'));
    const before = await approval(g, waiting.approvalId);
    const size = await treeSize(g);
    const events = (await outbox(g)).length;

    for (const d of ['approve', 'reject'] as const) {
      const byAgent = await decide(g, g.tokens.agent, waiting.approvalId, d, 'me');
      expect(byAgent.status).toBe(403);
      expect(byAgent.body.error.code).toBe('FORBIDDEN');
      const byOperator = await decide(g, g.tokens.operator, waiting.approvalId, d, 'ops');
      expect(byOperator.status).toBe(403);
      const byAdmin = await decide(g, g.tokens.admin, waiting.approvalId, d, 'admin');
      expect(byAdmin.status).toBe(403);
    }
    const missing = await decide(g, g.tokens.reviewer, 'no-such-approval', 'approve');
    expect(missing.status).toBe(404);
    expect(missing.body.error.code).toBe('NOT_FOUND');
    expect((await decide(g, g.tokens.reviewer, 'no-such-approval', 'reject', 'x')).status).toBe(
      404,
    );
    const noReason = await decide(g, g.tokens.reviewer, waiting.approvalId, 'reject');
    expect(noReason.status).toBe(400);
    expect(noReason.body.error.code).toBe('INVALID_INPUT');
    expect((await decide(g, g.tokens.reviewer, waiting.approvalId, 'reject', '   ')).status).toBe(
      400,
    );
    const badReason = await g.inject<ErrorBody>(
      'POST',
      `/v1/approvals/${waiting.approvalId}/approve`,
      { token: g.tokens.reviewer, body: { reason: 42 } },
    );
    expect(badReason.status).toBe(400);
    const unauthenticated = await g.inject('POST', `/v1/approvals/${waiting.approvalId}/approve`, {
      body: {},
    });
    expect(unauthenticated.status).toBe(401);

    expect(await approval(g, waiting.approvalId)).toEqual(before);
    expect(await treeSize(g)).toBe(size);
    expect((await outbox(g)).length).toBe(events);

    // No principal is both an agent and a reviewer: an agent could otherwise approve calls,
    // its own among them. The REST route and the directory both refuse to make one.
    const both = await g.inject<ErrorBody>('POST', '/v1/principals', {
      token: g.tokens.admin,
      body: {
        name: 'agent-and-reviewer',
        roles: ['agent', 'reviewer'],
        project: 'web',
        agent: 'demo-agent@1.0.0',
      },
    });
    expect(both.status).toBe(400);
    expect(both.body.error.details.pointer).toBe('/roles');
    await expect(
      g.gateway.directory.addPrincipal(
        {
          tenant: 'acme',
          name: 'agent-and-reviewer',
          roles: ['agent', 'reviewer'],
          project: 'web',
          agent: { id: 'demo-agent', version: '1.0.0' },
        },
        'test',
      ),
    ).rejects.toThrow(/agent role only/);
    expect(await approval(g, waiting.approvalId)).toEqual(before);
    expect(runs()).toBe(0);
  });

  it('counts a quorum of distinct reviewers; a reviewer deciding twice gets 409', async () => {
    const g = (own = await startDemoGateway({
      config: { approvalQuorum: { development: 2, staging: 1, production: 1 } },
    }));
    const second = await addReviewer(g, 'second-reviewer');
    const body = propose('Needs two');
    const waiting = await awaiting(g, 'quorum-1', body);
    expect((await approval(g, waiting.approvalId)).quorum).toBe(2);

    const one = await decide(g, g.tokens.reviewer, waiting.approvalId, 'approve', 'one');
    expect(one.status).toBe(200);
    expect(one.body).toMatchObject({ status: 'pending', version: 2, decidedAt: null });
    expect(one.body.decisions).toHaveLength(1);

    const snapshot = await approval(g, waiting.approvalId);
    const size = await treeSize(g);
    for (const d of ['approve', 'reject'] as const) {
      const twice = await decide(g, g.tokens.reviewer, waiting.approvalId, d, 'again');
      expect(twice.status).toBe(409);
      expect(twice.body.error.code).toBe('CONFLICT');
      expect(twice.body.error.message).toMatch(/already decided/);
    }
    expect(await approval(g, waiting.approvalId)).toEqual(snapshot);
    expect(await treeSize(g)).toBe(size);

    const early = await resume(g, 'quorum-1', body, waiting.approvalId);
    expect(early.status).toBe(409);
    expect((early.body as unknown as ErrorBody).error.code).toBe('APPROVAL_PENDING');
    expect((early.body as unknown as ErrorBody).error.message).toMatch(/1 of 2/);
    expect(g.executions(PROPOSE)).toBe(0);

    const two = await decide(g, second, waiting.approvalId, 'approve', 'two');
    expect(two.status).toBe(200);
    expect(two.body).toMatchObject({ status: 'approved', version: 3 });

    const done = await resume(g, 'quorum-1', body, waiting.approvalId);
    expect(done.status).toBe(200);
    expect(done.body.status).toBe('observed');
    expect(done.body.approval?.approvers.map((a) => a.principal)).toEqual([
      idOf(g, g.tokens.reviewer),
      idOf(g, second),
    ]);
    expect(g.executions(PROPOSE)).toBe(1);
  });

  it('refuses an already-decided approval with 409 and a replayed consumed one', async () => {
    const g = shared;
    const runs = proposeRuns(g);
    const other = await addReviewer(g, 'late-reviewer');
    const body = propose('Decided once');
    const waiting = await awaiting(g, 'decided-1', body);
    expect((await decide(g, g.tokens.reviewer, waiting.approvalId, 'approve')).status).toBe(200);
    const snapshot = await approval(g, waiting.approvalId);
    for (const d of ['approve', 'reject'] as const) {
      const late = await decide(g, other, waiting.approvalId, d, 'late');
      expect(late.status).toBe(409);
      expect(late.body.error.message).toMatch(/already approved/);
    }
    expect(await approval(g, waiting.approvalId)).toEqual(snapshot);

    expect((await resume(g, 'decided-1', body, waiting.approvalId)).status).toBe(200);
    const consumed = await approval(g, waiting.approvalId);
    expect(consumed.status).toBe('consumed');
    expect((await decide(g, other, waiting.approvalId, 'approve')).status).toBe(409);

    // The consumed approval, replayed for the same request under another key, runs nothing.
    const size = await treeSize(g);
    const replay = await resume(g, 'decided-2', body, waiting.approvalId);
    expect(replay.status).toBe(409);
    expect(['APPROVAL_STALE', 'APPROVAL_CONSUMED']).toContain(
      (replay.body as unknown as ErrorBody).error.code,
    );
    expect(runs()).toBe(1);
    expect(await approval(g, waiting.approvalId)).toEqual(consumed);
    expect(await treeSize(g)).toBe(size);
    // …and the key stays unused: without the approval the request waits for its own.
    const fresh = await awaiting(g, 'decided-2', body);
    expect(fresh.approvalId).not.toBe(waiting.approvalId);
  });

  it('denies a rejected call at the approval stage with the reason', async () => {
    const g = shared;
    const runs = proposeRuns(g);
    const since = await outboxEnd(g);
    const body = propose('Touch billing');
    const waiting = await awaiting(g, 'reject-1', body);
    const rejected = await decide(
      g,
      g.tokens.reviewer,
      waiting.approvalId,
      'reject',
      'billing is frozen this week',
    );
    expect(rejected.status).toBe(200);
    expect(rejected.body).toMatchObject({ status: 'rejected' });
    const decided = (await outbox(g, since)).filter((e) => e.type === 'ApprovalDecided');
    expect(decided.map((e) => e.data.decision)).toEqual(['reject']);

    const denied = await resume(g, 'reject-1', body, waiting.approvalId);
    expect(denied.status).toBe(403);
    expect(denied.body).toMatchObject({
      id: waiting.id,
      status: 'denied',
      error: { code: 'APPROVAL_REJECTED', stage: 'approval' },
    });
    expect(denied.body.error?.message).toContain('billing is frozen this week');
    expect(runs()).toBe(0);
    // Denied is final: a retry answers the same record and the approval stays rejected.
    const again = await resume(g, 'reject-1', body, waiting.approvalId);
    expect(again.status).toBe(403);
    expect(again.body.id).toBe(waiting.id);
    expect((await approval(g, waiting.approvalId)).status).toBe('rejected');
    const jwks = (await g.inject('GET', '/v1/receipt-keys')).body as JwkSet;
    const envelope = (
      await g.inject('GET', `/v1/invocations/${waiting.id}/receipt`, { token: g.tokens.agent })
    ).body;
    expect(verifyReceipt(envelope, jwks)).toMatchObject({ ok: true });
  });

  it('refuses to decide an expired approval and denies resuming with it', async () => {
    const clock = new ManualClock(Date.now());
    const g = (own = await startDemoGateway({ clock, config: { approvalTtlMs: 60_000 } }));
    const body = propose('Expires unseen');
    const unseen = await awaiting(g, 'expire-1', body);
    const a = await approval(g, unseen.approvalId);
    expect(Date.parse(a.expiresAt) - Date.parse(a.requestedAt)).toBe(60_000);

    const body2 = propose('Expires approved');
    const unused = await awaiting(g, 'expire-2', body2);
    expect((await decide(g, g.tokens.reviewer, unused.approvalId, 'approve')).status).toBe(200);

    clock.advance(60_000);
    const late = await decide(g, g.tokens.reviewer, unseen.approvalId, 'approve', 'too late');
    expect(late.status).toBe(409);
    expect(late.body.error.message).toMatch(/expired/);
    expect((await approval(g, unseen.approvalId)).status).toBe('expired');

    for (const [key, b, rec] of [
      ['expire-1', body, unseen],
      ['expire-2', body2, unused],
    ] as const) {
      const denied = await resume(g, key, b, rec.approvalId);
      expect(denied.status, JSON.stringify(denied.body)).toBe(403);
      expect(denied.body).toMatchObject({
        id: rec.id,
        status: 'denied',
        error: { code: 'APPROVAL_EXPIRED', stage: 'approval' },
      });
    }
    expect((await approval(g, unused.approvalId)).status).toBe('expired');
    expect(g.executions(PROPOSE)).toBe(0);
  });

  it('expires with a tiny configured TTL on the wall clock', async () => {
    const g = (own = await startDemoGateway({ config: { approvalTtlMs: 1 } }));
    const body = propose('Blink');
    const waiting = await awaiting(g, 'ttl-1', body);
    await new Promise((r) => setTimeout(r, 20));
    expect((await decide(g, g.tokens.reviewer, waiting.approvalId, 'approve')).status).toBe(409);
    const denied = await resume(g, 'ttl-1', body, waiting.approvalId);
    expect(denied.status).toBe(403);
    expect(denied.body.error?.code).toBe('APPROVAL_EXPIRED');
  });
});

describe('approvals across tenants', () => {
  it('are invisible to another tenant: deciding and resuming answer 404', async () => {
    const g = shared;
    const runs = proposeRuns(g);
    const d = g.gateway.directory;
    await d.ensureTenant('globex', 'Globex', 'test');
    await d.ensureProject('globex', 'web', 'test');
    await d.putEnvironment(
      { tenant: 'globex', project: 'web', name: 'dev', class: 'development', frozen: false },
      'test',
    );
    await g.gateway.policy.replace('globex', undefined, defaultTenantPolicy(), 'test');
    const { token: gAdmin } = await d.addPrincipal(
      { tenant: 'globex', name: 'globex-admin', roles: ['admin'] },
      'test',
    );
    const { token: gReviewer } = await d.addPrincipal(
      { tenant: 'globex', name: 'globex-reviewer', roles: ['reviewer'] },
      'test',
    );
    const { token: gAgent } = await d.addPrincipal(
      {
        tenant: 'globex',
        name: 'globex-agent',
        roles: ['agent'],
        project: 'web',
        agent: { id: 'demo-agent', version: '1.0.0' },
      },
      'test',
    );
    const published = await g.inject('POST', '/v1/events', {
      token: gAdmin,
      body: [...demoToolEvents, demoAgentEvent([])],
    });
    expect(published.status, JSON.stringify(published.body)).toBe(200);

    const approvalIds = async () =>
      (
        await g.inject<{ approvals: Approval[] }>('GET', '/v1/approvals', {
          token: g.tokens.reviewer,
        })
      ).body.approvals.map((a) => a.id);
    const invocationIds = async () =>
      (
        await g.inject<{ invocations: InvocationRecord[] }>('GET', '/v1/invocations', {
          token: g.tokens.agent,
        })
      ).body.invocations.map((r) => r.id);
    const [approvalsBefore, invocationsBefore] = [await approvalIds(), await invocationIds()];
    const body = propose('Same words, other tenant');
    const theirs = await awaiting(g, 'x-1', body, gAgent);
    const ours = await awaiting(g, 'x-1', body);
    expect(theirs.requestHash).not.toBe(ours.requestHash);
    const theirsBefore = await approval(g, theirs.approvalId, gReviewer);
    const oursBefore = await approval(g, ours.approvalId);

    // Reading and deciding another tenant's approval.
    expect(
      (await g.inject('GET', `/v1/approvals/${theirs.approvalId}`, { token: g.tokens.reviewer }))
        .status,
    ).toBe(404);
    for (const dd of ['approve', 'reject'] as const) {
      expect((await decide(g, g.tokens.reviewer, theirs.approvalId, dd, 'x')).status).toBe(404);
      expect((await decide(g, gReviewer, ours.approvalId, dd, 'x')).status).toBe(404);
    }
    expect((await approvalIds()).sort()).toEqual([...approvalsBefore, ours.approvalId].sort());

    // Resuming with another tenant's approval, approved there.
    expect((await decide(g, gReviewer, theirs.approvalId, 'approve')).status).toBe(200);
    const onOurs = await resume(g, 'x-1', body, theirs.approvalId);
    expect(onOurs.status).toBe(404);
    expect((onOurs.body as unknown as ErrorBody).error.code).toBe('NOT_FOUND');
    const onNew = await resume(g, 'x-2', body, theirs.approvalId);
    expect(onNew.status).toBe(404);
    expect(runs()).toBe(0);
    expect(await approval(g, ours.approvalId)).toEqual(oursBefore);
    const theirsNow = await approval(g, theirs.approvalId, gReviewer);
    expect(theirsNow).toMatchObject({ status: 'approved', version: theirsBefore.version + 1 });
    // The key x-2 was not used by the refusal.
    expect((await invocationIds()).sort()).toEqual([...invocationsBefore, ours.id].sort());

    // Their own agent resumes with it.
    const done = await resume(g, 'x-1', body, theirs.approvalId, gAgent);
    expect(done.status).toBe(200);
    expect(done.body).toMatchObject({ tenant: 'globex', status: 'observed' });
    expect(runs()).toBe(1);
  });
});
