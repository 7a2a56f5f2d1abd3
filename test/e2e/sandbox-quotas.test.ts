import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterEach, describe, expect, it } from 'vitest';
import type { InvocationRecord } from '../../src/invocation/index.js';
import { addAgent } from '../helpers/agents.js';
import { call, startDemoGateway } from '../helpers/gateway-fixture.js';
import type { DemoGateway } from '../helpers/gateway-fixture.js';
import { leaseRows, publishAgent, shTool } from '../helpers/sandbox-tools.js';

let g: DemoGateway | undefined;

/** Waits until the call with idempotency key `key` is running. */
async function untilRunning(gw: DemoGateway, key: string): Promise<void> {
  for (let i = 0; i < 250; i++) {
    const list = await gw.inject<{ invocations: InvocationRecord[] }>(
      'GET',
      '/v1/invocations?status=running',
      { token: gw.tokens.operator },
    );
    if (list.body.invocations.some((r) => r.idempotencyKey === key)) return;
    await sleep(20);
  }
  throw new Error(`${key} never ran`);
}
afterEach(async () => {
  await g?.close();
  g = undefined;
});

const sh = (script: string, attempt?: string) => ({
  ...(call('test/quota-sh', { script }) as object),
  ...(attempt ? { runId: 'run-q', attemptId: attempt } : {}),
});

describe('lease quotas through the gateway', () => {
  it('an agent at its quota gets QUOTA_EXCEEDED naming it, while another agent of the tenant runs', async () => {
    g = await startDemoGateway({
      sandbox: { pool: { quotas: { tenantLeases: 4, agentLeases: 1 } }, queueBudgetMs: 300 },
    });
    const first = await publishAgent(g, 'quota-a', [shTool('test/quota-sh')]);
    const second = await addAgent(g, 'quota-b', [{ id: 'test/quota-sh', version: '1.0.0' }]);
    // A running call of the first agent holds its only lease.
    const held = g.invoke(first, 'q-1', sh('sleep 3; echo held'));
    await untilRunning(g, 'q-1');

    const refused = (await g.invoke(first, 'q-2', sh('echo over'))).body;
    expect(refused.status).toBe('failed');
    expect(refused.error).toMatchObject({
      code: 'QUOTA_EXCEEDED',
      stage: 'sandbox',
      details: { scope: 'agent', limit: 1, held: 1, retryable: true },
    });
    expect(refused.error?.message).toMatch(/^Agent \S+ holds 1 of its 1 leases in pool default/);

    const other = (await g.invoke(second.token, 'q-3', sh('echo other'))).body;
    expect(other).toMatchObject({ status: 'observed', output: { stdout: 'other\n' } });
    expect((await held).body.status).toBe('observed');
  });

  it('an agent at its quota through idle attempt leases gets its call run: its least recently used idle attempt lease ends', async () => {
    g = await startDemoGateway({
      sandbox: {
        pool: { quotas: { tenantLeases: 4, agentLeases: 2 } },
        idleAttemptsPerAgent: 5,
        queueBudgetMs: 300,
        reapIntervalMs: 3_600_000,
      },
    });
    const agent = await publishAgent(g, 'quota-idle', [shTool('test/quota-sh')]);
    const leaseOf = (r: { lease: unknown }) => (r.lease as { id: string }).id;
    const one = (await g.invoke(agent, 'e-1', sh('echo one > f', 'a-1'))).body;
    const two = (await g.invoke(agent, 'e-2', sh('echo two', 'a-2'))).body;
    expect([one.status, two.status]).toEqual(['observed', 'observed']);
    // a-2 is the more recently used: a-1 is the one to go.
    const workspace = join(g.sandboxRoot, 'workspaces', leaseOf(one));
    expect(existsSync(workspace)).toBe(true);

    const three = (await g.invoke(agent, 'e-3', sh('echo three'))).body;
    expect(three, JSON.stringify(three.error)).toMatchObject({
      status: 'observed',
      output: { stdout: 'three\n' },
    });
    const rows = await leaseRows(g);
    const first = rows.find((r) => r.id === leaseOf(one))!;
    expect(first.status).toBe('released');
    expect((JSON.parse(first.record) as { endReason: string }).endReason).toMatch(
      /agent lease quota in pool default was full \(2 of 2\); its least recently used idle attempt lease ends/,
    );
    expect(existsSync(workspace)).toBe(false);
    expect(rows.find((r) => r.id === leaseOf(two))?.status).toBe('active');
    // The attempt whose lease ended starts afresh on its next call.
    const again = (await g.invoke(agent, 'e-4', sh('cat f 2>/dev/null || echo fresh', 'a-1'))).body;
    expect(again).toMatchObject({ status: 'observed', output: { stdout: 'fresh\n' } });
  });

  it('an agent keeps at most its cap of idle attempt leases: the least recently used ends with its workspace', async () => {
    g = await startDemoGateway({ sandbox: { idleAttemptsPerAgent: 1, reapIntervalMs: 3_600_000 } });
    const agent = await publishAgent(g, 'idle-agent', [shTool('test/quota-sh')]);
    const one = (await g.invoke(agent, 'i-1', sh('echo one > f', 'a-1'))).body;
    expect(one.status, JSON.stringify(one.error)).toBe('observed');
    const workspace = join(g.sandboxRoot, 'workspaces', (one.lease as { id: string }).id);
    expect(existsSync(workspace)).toBe(true);

    const two = (await g.invoke(agent, 'i-2', sh('echo two', 'a-2'))).body;
    expect(two.status, JSON.stringify(two.error)).toBe('observed');
    const rows = await leaseRows(g);
    const firstRow = rows.find((r) => r.id === (one.lease as { id: string }).id)!;
    expect(firstRow.status).toBe('released');
    expect((JSON.parse(firstRow.record) as { endReason: string }).endReason).toMatch(
      /more than 1 idle attempt lease/,
    );
    expect(rows.find((r) => r.id === (two.lease as { id: string }).id)?.status).toBe('active');
    expect(existsSync(workspace)).toBe(false);
  });
});
