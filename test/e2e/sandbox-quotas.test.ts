import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { addAgent } from '../helpers/agents.js';
import { call, startDemoGateway } from '../helpers/gateway-fixture.js';
import type { DemoGateway } from '../helpers/gateway-fixture.js';
import { leaseRows, publishAgent, shTool } from '../helpers/sandbox-tools.js';

let g: DemoGateway | undefined;
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
    // An idle attempt lease of the first agent holds its only lease.
    const held = await g.invoke(first, 'q-1', sh('echo held', 'a-1'));
    expect(held.body.status, JSON.stringify(held.body.error)).toBe('observed');

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
    const rows = leaseRows(g.gateway.db.raw);
    const firstRow = rows.find((r) => r.id === (one.lease as { id: string }).id)!;
    expect(firstRow.status).toBe('released');
    expect((JSON.parse(firstRow.record) as { endReason: string }).endReason).toMatch(
      /more than 1 idle attempt lease/,
    );
    expect(rows.find((r) => r.id === (two.lease as { id: string }).id)?.status).toBe('active');
    expect(existsSync(workspace)).toBe(false);
  });
});
