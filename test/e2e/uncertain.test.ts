import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { verifyReceipt } from '../../src/audit/index.js';
import type { JwkSet, ReceiptStatement } from '../../src/audit/index.js';
import type { StoredEvent } from '../../src/core/index.js';
import type { InvocationRecord } from '../../src/invocation/index.js';
import { call, startDemoGateway } from '../helpers/gateway-fixture.js';
import type { DemoGateway, ErrorBody } from '../helpers/gateway-fixture.js';

const DEPLOY = 'demo.flaky-deploy';

let g: DemoGateway;
beforeEach(async () => {
  g = await startDemoGateway();
});
afterEach(async () => {
  await g.close();
});

function deploy(version: string, dropConnection = true): unknown {
  return call('demo/flaky-deploy', { service: 'web', version, dropConnection }, 'prod');
}

/** Lines of the demo deploy log: the effects flaky-deploy really had. */
function deployments(): { invocationId: string; version: string }[] {
  const file = join(g.dataDir, 'demo-deployments.jsonl');
  if (!existsSync(file)) return [];
  return readFileSync(file, 'utf8')
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => JSON.parse(l) as { invocationId: string; version: string });
}

async function outbox(): Promise<StoredEvent[]> {
  return g.gateway.storage.outbox.after('acme', 0, 10_000);
}

function idOf(token: string): string {
  return g.gateway.directory.authenticate(token)!.id;
}

/** Invokes, has the reviewer approve, resumes with the same key; returns the resumed answer. */
async function approvedRun(key: string, body: unknown) {
  const waiting = await g.invoke(g.tokens.agent, key, body);
  expect(waiting.status, JSON.stringify(waiting.body)).toBe(202);
  expect(waiting.body).toMatchObject({ status: 'awaiting_approval', effectiveClass: 'production' });
  const approvalId = waiting.body.approvalId!;
  const ok = await g.inject('POST', `/v1/approvals/${approvalId}/approve`, {
    token: g.tokens.reviewer,
    body: { reason: 'ship it' },
  });
  expect(ok.status).toBe(200);
  return {
    waiting: waiting.body,
    approvalId,
    resumed: await g.invoke(g.tokens.agent, key, { ...(body as object), approvalId }),
  };
}

function resolve(id: string, body: unknown, token = g.tokens.operator) {
  return g.inject<InvocationRecord & ErrorBody>('POST', `/v1/invocations/${id}/resolve`, {
    token,
    body,
  });
}

async function get(id: string): Promise<InvocationRecord> {
  const res = await g.inject<InvocationRecord>('GET', `/v1/invocations/${id}`, {
    token: g.tokens.operator,
  });
  expect(res.status).toBe(200);
  return res.body;
}

async function uncertainIds(): Promise<string[]> {
  const res = await g.inject<{ invocations: InvocationRecord[] }>('GET', '/v1/uncertain', {
    token: g.tokens.operator,
  });
  expect(res.status).toBe(200);
  return res.body.invocations.map((r) => r.id);
}

/** The verified receipt of an invocation, and the audit record its predicate points at. */
async function receiptAndAudit(id: string) {
  const jwks = (await g.inject('GET', '/v1/receipt-keys')).body as JwkSet;
  const envelope = (
    await g.inject('GET', `/v1/invocations/${id}/receipt`, { token: g.tokens.operator })
  ).body;
  const verdict = verifyReceipt(envelope, jwks);
  if (!verdict.ok) throw new Error(verdict.reason);
  const statement: ReceiptStatement = verdict.statement;
  const rec = await g.inject<{
    record: { type: string; subject: string; actor: string; data: Record<string, unknown> };
  }>('GET', `/v1/audit/records/${statement.predicate.audit.index}`, { token: g.tokens.operator });
  expect(rec.status).toBe(200);
  return { predicate: statement.predicate, audit: rec.body.record };
}

describe('an Uncertain effect', () => {
  it('blocks retries with 409 until an operator confirms it; then a retry returns the record', async () => {
    const body = deploy('1.2.3');
    const { waiting, approvalId, resumed } = await approvedRun('deploy-1', body);
    expect(resumed.status, JSON.stringify(resumed.body)).toBe(200);
    expect(resumed.body).toMatchObject({ id: waiting.id, status: 'uncertain' });
    expect(resumed.body.error?.message).toMatch(/connection to the deploy service dropped/);
    const id = waiting.id;
    expect(deployments().map((d) => d.invocationId)).toEqual([id]);
    expect(g.executions(DEPLOY)).toBe(1);

    const uncertainEvents = (await outbox()).filter((e) => e.type === 'ToolEffectUncertain');
    expect(uncertainEvents.map((e) => e.subject)).toEqual([`invocation/${id}`]);

    expect(await uncertainIds()).toEqual([id]);
    for (const token of [g.tokens.agent, g.tokens.reviewer, g.tokens.admin]) {
      expect((await g.inject('GET', '/v1/uncertain', { token })).status).toBe(403);
    }

    // Retries, with or without the (consumed) approval, run nothing.
    for (const retry of [body, { ...(body as object), approvalId }]) {
      const blocked = await g.invoke(g.tokens.agent, 'deploy-1', retry);
      expect(blocked.status).toBe(409);
      const err = (blocked.body as unknown as ErrorBody).error;
      expect(err.code).toBe('EFFECT_UNCERTAIN');
      expect(err.details).toMatchObject({ invocation: id });
    }
    expect(deployments()).toHaveLength(1);
    expect(g.executions(DEPLOY)).toBe(1);

    // Bad resolutions change nothing.
    const evidence = { deployLog: deployments()[0] };
    expect((await resolve(id, { effect: 'confirmed', evidence }, g.tokens.agent)).status).toBe(403);
    expect((await resolve(id, { effect: 'confirmed', evidence }, g.tokens.reviewer)).status).toBe(
      403,
    );
    const noEvidence = await resolve(id, { effect: 'confirmed' });
    expect(noEvidence.status).toBe(400);
    expect(noEvidence.body.error.message).toMatch(/evidence/);
    expect((await resolve(id, { effect: 'confirmed', evidence: '' })).status).toBe(400);
    expect((await resolve(id, { effect: 'confirmed', evidence: null })).status).toBe(400);
    expect((await resolve(id, { effect: 'maybe', evidence })).status).toBe(400);
    expect((await resolve('no-such-invocation', { effect: 'confirmed', evidence })).status).toBe(
      404,
    );
    const still = await get(id);
    expect(still.status).toBe('uncertain');
    expect(still.resolution).toBeNull();

    const confirmed = await resolve(id, { effect: 'confirmed', evidence });
    expect(confirmed.status, JSON.stringify(confirmed.body)).toBe(200);
    expect(confirmed.body).toMatchObject({
      id,
      status: 'observed',
      resolution: { effect: 'confirmed', evidence, by: idOf(g.tokens.operator) },
    });
    expect(confirmed.body.trace.at(-1)).toMatchObject({
      stage: 'resolution',
      decision: 'confirmed',
    });
    expect(await uncertainIds()).toEqual([]);
    const resolvedEvents = (await outbox()).filter((e) => e.type === 'ToolEffectResolved');
    expect(resolvedEvents.map((e) => [e.subject, e.data.effect])).toEqual([
      [`invocation/${id}`, 'confirmed'],
    ]);

    // Resolved once: a second resolution is refused.
    const twice = await resolve(id, { effect: 'denied', evidence: 'changed my mind' });
    expect(twice.status).toBe(409);
    expect((await get(id)).status).toBe('observed');

    const retry = await g.invoke(g.tokens.agent, 'deploy-1', body);
    expect(retry.status).toBe(200);
    expect(retry.body).toMatchObject({ id, status: 'observed', attempt: 1 });
    expect(deployments()).toHaveLength(1);
    expect(g.executions(DEPLOY)).toBe(1);

    const { predicate, audit } = await receiptAndAudit(id);
    expect(predicate.status).toBe('observed');
    expect(predicate.approval?.id).toBe(approvalId);
    expect(predicate.stages.map((s) => s.stage)).toContain('resolution');
    expect(audit).toMatchObject({
      type: 'invocation.resolved',
      subject: `invocation/${id}`,
      actor: idOf(g.tokens.operator),
      data: { effect: 'confirmed', evidence, status: 'observed' },
    });
  });

  it('denied by an operator ends failed, and a retry with the same key runs as attempt 2', async () => {
    const body = deploy('2.0.0');
    const first = await approvedRun('deploy-2', body);
    expect(first.resumed.body.status).toBe('uncertain');
    const id = first.waiting.id;
    expect(deployments()).toHaveLength(1);

    const evidence = 'deploy service shows no rollout of web 2.0.0';
    const denied = await resolve(id, { effect: 'denied', evidence });
    expect(denied.status).toBe(200);
    expect(denied.body).toMatchObject({
      id,
      status: 'failed',
      resolution: { effect: 'denied', evidence },
      error: { code: 'EFFECT_DENIED' },
    });
    const { predicate, audit } = await receiptAndAudit(id);
    expect(predicate.status).toBe('failed');
    expect(audit).toMatchObject({
      type: 'invocation.resolved',
      data: { effect: 'denied', evidence, status: 'failed' },
    });

    // The retry is a new attempt; a production call, it waits for its own approval.
    const retry = await g.invoke(g.tokens.agent, 'deploy-2', body);
    expect(retry.status, JSON.stringify(retry.body)).toBe(202);
    expect(retry.body).toMatchObject({
      status: 'awaiting_approval',
      attempt: 2,
      previousAttempt: id,
      requestHash: first.waiting.requestHash,
    });
    expect(retry.body.id).not.toBe(id);
    expect(retry.body.approvalId).not.toBe(first.approvalId);
    expect(deployments()).toHaveLength(1);
    // The same retry again is the same attempt 2, not a third.
    const same = await g.invoke(g.tokens.agent, 'deploy-2', body);
    expect(same.body.id).toBe(retry.body.id);

    const approvalId = retry.body.approvalId!;
    expect(
      (
        await g.inject('POST', `/v1/approvals/${approvalId}/approve`, {
          token: g.tokens.reviewer,
          body: {},
        })
      ).status,
    ).toBe(200);
    const second = await g.invoke(g.tokens.agent, 'deploy-2', { ...(body as object), approvalId });
    expect(second.status).toBe(200);
    expect(second.body).toMatchObject({
      id: retry.body.id,
      attempt: 2,
      previousAttempt: id,
      status: 'uncertain',
    });
    expect(deployments().map((d) => d.invocationId)).toEqual([id, retry.body.id]);
    expect(g.executions(DEPLOY)).toBe(2);
    expect((await get(id)).status).toBe('failed');
    expect(await uncertainIds()).toEqual([retry.body.id]);
  });

  it('resolving an invocation that is not uncertain answers 409 and changes nothing', async () => {
    const echo = await g.invoke(g.tokens.agent, 'echo-1', call('demo/echo', { message: 'hi' }));
    expect(echo.body.status).toBe('observed');
    const waiting = await g.invoke(g.tokens.agent, 'deploy-3', deploy('3.0.0', false));
    expect(waiting.body.status).toBe('awaiting_approval');
    for (const r of [echo.body, waiting.body]) {
      for (const effect of ['confirmed', 'denied']) {
        const res = await resolve(r.id, { effect, evidence: 'none' });
        expect(res.status).toBe(409);
        expect(res.body.error.code).toBe('CONFLICT');
        expect(res.body.error.message).toMatch(/not uncertain/);
      }
      expect(await get(r.id)).toEqual(r);
    }
  });
});
