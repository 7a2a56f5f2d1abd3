import { setTimeout as sleep } from 'node:timers/promises';
import { afterEach, describe, expect, it } from 'vitest';
import type { InvocationRecord } from '../../src/invocation/index.js';
import { call, startDemoGateway } from '../helpers/gateway-fixture.js';
import type { DemoGateway, DemoGatewayOptions } from '../helpers/gateway-fixture.js';
import { auditRecords, leaseRows, publishAgent, shTool } from '../helpers/sandbox-tools.js';
import type { LeaseRow } from '../helpers/sandbox-tools.js';

/** The leases of tool calls (the demo's sandboxed MCP upstream holds one of its own pool). */
async function callLeases(gw: DemoGateway): Promise<LeaseRow[]> {
  return (await leaseRows(gw)).filter((l) => !l.holder.startsWith('mcp/'));
}

let g: DemoGateway | undefined;
afterEach(async () => {
  await g?.close();
  g = undefined;
});

async function open(sandbox: DemoGatewayOptions['sandbox']): Promise<DemoGateway> {
  g = await startDemoGateway({ sandbox });
  return g;
}

const sh = (script: string) => call('demo/sh', { script });

/** Waits until `id` is running (its lease held). */
async function untilRunning(gw: DemoGateway, id?: string): Promise<InvocationRecord> {
  for (let i = 0; i < 250; i++) {
    const list = await gw.inject<{ invocations: InvocationRecord[] }>(
      'GET',
      '/v1/invocations?status=running',
      { token: gw.tokens.operator },
    );
    const found = list.body.invocations.find((r) => id === undefined || r.id === id);
    if (found) return found;
    await sleep(20);
  }
  throw new Error('the call never ran');
}

/** The `invocation.*` audit record types of one invocation, in log order. */
async function auditTypes(gw: DemoGateway, id: string): Promise<string[]> {
  return (await auditRecords(gw))
    .filter((r) => r.subject === `invocation/${id}` && r.type.startsWith('invocation.'))
    .map((r) => r.type);
}

describe('execution capacity through the gateway', () => {
  it('a call that finds no capacity within its budget is failed CAPACITY_EXHAUSTED, retryable, after being queued', async () => {
    const gw = await open({ pool: { leases: 1 }, queueBudgetMs: 300 });
    const first = gw.invoke(gw.tokens.agent, 'cap-first', sh('sleep 2; echo first'));
    const running = await untilRunning(gw);

    const started = Date.now();
    const second = await gw.invoke(gw.tokens.agent, 'cap-second', sh('echo second'));
    const waited = Date.now() - started;
    expect(waited).toBeGreaterThanOrEqual(280);
    // It gave up at its budget (the CAPACITY_EXHAUSTED below), not after the first call ended;
    // the bound is loose so a loaded machine does not fail it.
    expect(waited).toBeLessThan(10_000);
    expect(second.status).toBe(200);
    const r = second.body;
    expect(r.status).toBe('failed');
    expect(r.error).toMatchObject({
      code: 'CAPACITY_EXHAUSTED',
      stage: 'sandbox',
      details: { pool: 'default', budgetMs: 300, retryable: true },
    });
    expect(r.error?.message).toMatch(/No capacity in pool default within the 300 ms queue budget/);
    expect(r.trace.find((t) => t.stage === 'sandbox')?.decision).toBe('fail');
    expect(r.trace.some((t) => t.stage === 'execute')).toBe(false);
    expect(r.lease).toBeNull();
    // It was recorded queued while it waited, then failed.
    expect(await auditTypes(gw, r.id)).toEqual(['invocation.queued', 'invocation.failed']);
    // Its credential lease was issued before it queued, and revoked when it failed.
    expect(
      (await auditRecords(gw))
        .filter((a) => a.subject === `invocation/${r.id}` && a.type.startsWith('credential.'))
        .map((a) => a.type),
    ).toEqual(['credential.issued', 'credential.revoked']);
    // Nothing ran for it: no lease was granted to it.
    expect((await callLeases(gw)).map((l) => l.holder)).toEqual([`invocation/${running.id}`]);

    expect((await first).body.status).toBe('observed');
    const retry = await gw.invoke(gw.tokens.agent, 'cap-second', sh('echo second'));
    expect(retry.body).toMatchObject({
      status: 'observed',
      attempt: 2,
      previousAttempt: r.id,
      output: { exitCode: 0, stdout: 'second\n' },
    });
    expect(retry.body.id).not.toBe(r.id);
    expect(await auditTypes(gw, retry.body.id)).toEqual([
      'invocation.running',
      'invocation.observed',
    ]);
  });

  it('with a larger budget the waiting call runs once capacity frees up, having been queued', async () => {
    const gw = await open({ pool: { leases: 1 }, queueBudgetMs: 10_000 });
    const first = gw.invoke(gw.tokens.agent, 'wait-first', sh('sleep 1; echo first'));
    await untilRunning(gw);
    const second = gw.invoke(gw.tokens.agent, 'wait-second', sh('echo second'));
    // While it waits it is queued, for everyone to see.
    let queued: InvocationRecord | undefined;
    for (let i = 0; i < 100 && !queued; i++) {
      const list = await gw.inject<{ invocations: InvocationRecord[] }>(
        'GET',
        '/v1/invocations?status=queued',
        { token: gw.tokens.operator },
      );
      queued = list.body.invocations[0];
      if (!queued) await sleep(20);
    }
    expect(queued?.idempotencyKey).toBe('wait-second');
    expect((await first).body.status).toBe('observed');
    const r = (await second).body;
    expect(r.id).toBe(queued?.id);
    expect(r).toMatchObject({ status: 'observed', output: { stdout: 'second\n' } });
    expect(await auditTypes(gw, r.id)).toEqual([
      'invocation.queued',
      'invocation.running',
      'invocation.observed',
    ]);
  });

  it('a read call that waited for capacity is recorded running while it runs, not left queued', async () => {
    const gw = await open({ pool: { leases: 1 }, queueBudgetMs: 10_000 });
    const agent = await publishAgent(gw, 'read-agent', [
      shTool('test/read-sh', { sideEffect: { class: 'read' } }),
    ]);
    const first = gw.invoke(gw.tokens.agent, 'read-first', sh('sleep 1; echo first'));
    const holder = await untilRunning(gw);
    const read = gw.invoke(
      agent,
      'read-second',
      call('test/read-sh', { script: 'sleep 1.5; echo second' }),
    );
    // Once the first call is done, the read runs: a crash now must find it `running` (it may
    // have read something), not `queued` (which recovery settles as "nothing ran").
    expect((await first).body.status).toBe('observed');
    const running = await untilRunning(gw, undefined);
    expect(running.id).not.toBe(holder.id);
    expect(running.idempotencyKey).toBe('read-second');
    const r = (await read).body;
    expect(r).toMatchObject({ status: 'observed', output: { stdout: 'second\n' } });
    expect(await auditTypes(gw, r.id)).toEqual([
      'invocation.queued',
      'invocation.running',
      'invocation.observed',
    ]);
  });

  it('a GPU request on a pool without GPUs is refused with a reason, before any lease', async () => {
    const gw = await open({});
    const agent = await publishAgent(gw, 'gpu-agent', [
      shTool('test/gpu-sh', { sandbox: { gpus: 1 } }),
    ]);
    const res = await gw.invoke(agent, 'gpu-1', call('test/gpu-sh', { script: 'echo gpu' }));
    const r = res.body;
    expect(r.status).toBe('failed');
    expect(r.error?.stage).toBe('sandbox');
    expect(r.error?.message).toMatch(/asks for 1 GPU\(s\), but pool default has no GPUs/);
    expect(r.trace.some((t) => t.stage === 'execute')).toBe(false);
    expect(await callLeases(gw)).toEqual([]);
  });

  it('descriptor credentials fail closed before any lease: a missing secret, a scope not granted', async () => {
    const gw = await open({});
    const agent = await publishAgent(gw, 'cred-agent', [
      shTool('test/missing-secret', {
        credentials: [{ ref: 'no-such-secret', scope: 'x', inject: { env: 'TOKEN' } }],
      }),
      shTool('test/wrong-scope', {
        credentials: [{ ref: 'demo-token', scope: 'admin', inject: { env: 'TOKEN' } }],
      }),
    ]);
    const missing = (
      await gw.invoke(agent, 'cred-1', call('test/missing-secret', { script: 'echo ran' }))
    ).body;
    expect(missing.status).toBe('failed');
    expect(missing.error).toMatchObject({ code: 'CREDENTIAL_UNAVAILABLE', stage: 'credentials' });
    expect(missing.error?.message).toMatch(/no-such-secret/);
    expect(missing.error?.message).toMatch(/before any effect/);

    const scope = (
      await gw.invoke(agent, 'cred-2', call('test/wrong-scope', { script: 'echo ran' }))
    ).body;
    expect(scope.status).toBe('failed');
    expect(scope.error).toMatchObject({ code: 'CREDENTIAL_SCOPE_DENIED', stage: 'credentials' });
    expect(scope.error?.message).toMatch(/admin/);

    for (const r of [missing, scope]) {
      expect(r.trace.map((t) => t.stage)).not.toContain('sandbox');
      expect(r.trace.find((t) => t.stage === 'credentials')?.decision).toBe('fail');
      expect(r.lease).toBeNull();
      expect(await auditTypes(gw, r.id)).toEqual(['invocation.failed']);
    }
    // No sandbox was spawned: no lease was ever granted.
    expect(await callLeases(gw)).toEqual([]);
    expect(
      (await auditRecords(gw)).filter(
        (a) => a.type.startsWith('lease.') && !JSON.stringify(a).includes('"mcp/'),
      ),
    ).toEqual([]);
  });
});
