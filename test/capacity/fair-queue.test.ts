import { describe, expect, it } from 'vitest';
import { ExecutionCapacity } from '../../src/capacity/index.js';
import type { LeaseRequest } from '../../src/capacity/index.js';
import { isGatehouseError } from '../../src/core/index.js';
import { MemoryLeaseStore } from '../helpers/memory-lease-store.js';

async function open(quotas = { tenantLeases: 10, agentLeases: 10 }): Promise<ExecutionCapacity> {
  let n = 0;
  return ExecutionCapacity.open({
    store: new MemoryLeaseStore(),
    clock: { now: () => 0 },
    ids: { next: () => `lease-${++n}` },
    pools: [{ name: 'p', cpus: 100, memoryBytes: 1e12, gpus: 0, leases: 2, quotas }],
  });
}

function ask(tenant: string, agent: string, holder: string): LeaseRequest {
  return {
    tenant,
    agent,
    pool: 'p',
    holder,
    resources: { cpus: 1, memoryBytes: 1, gpus: 0, pids: 1 },
    timeoutMs: 1000,
    readOnlyMounts: [],
    egressAllow: [],
    credentials: [],
    worktree: null,
    ttlMs: 60_000,
  };
}

const wait = (budgetMs = 5_000) => ({ budgetMs, signal: new AbortController().signal });

describe('fair queueing and quotas of execution capacity', () => {
  it('lets in the waiting tenant that holds fewest leases before an earlier waiter of a busier tenant', async () => {
    const c = await open();
    const a1 = await c.acquire(ask('a', 'a-agent', 'a1'), wait());
    await c.acquire(ask('a', 'a-agent', 'a2'), wait());
    const order: string[] = [];
    const a3 = c.acquire(ask('a', 'a-agent', 'a3'), wait()).then((l) => order.push(l.holder));
    const b1 = c.acquire(ask('b', 'b-agent', 'b1'), wait()).then((l) => order.push(l.holder));
    await c.release(a1, 'done');
    await b1;
    // a still holds one lease, b none: b's request goes first although a3 waited longer.
    expect(order).toEqual(['b1']);
    const b = c.activeLeases().find((l) => l.holder === 'b1')!;
    await c.release(b, 'done');
    await a3;
    expect(order).toEqual(['b1', 'a3']);
  });

  it('an agent over its quota waits without holding up another agent, then fails QUOTA_EXCEEDED naming the agent', async () => {
    const c = await open({ tenantLeases: 10, agentLeases: 1 });
    await c.acquire(ask('a', 'agent-1', 'x1'), wait());
    const over = c.acquire(ask('a', 'agent-1', 'x2'), wait(200)).catch((e: unknown) => e);
    // The other agent is let in at once, though the first agent's request is ahead in the queue.
    const other = await c.acquire(ask('a', 'agent-2', 'y1'), wait(200));
    expect(other.holder).toBe('y1');
    const err = await over;
    expect(isGatehouseError(err, 'QUOTA_EXCEEDED')).toBe(true);
    expect((err as Error).message).toMatch(/^Agent agent-1 holds 1 of its 1 leases in pool p/);
    expect((err as { details: unknown }).details).toMatchObject({
      scope: 'agent',
      agent: 'agent-1',
      limit: 1,
      held: 1,
      retryable: true,
    });
  });

  it('a tenant over its quota fails QUOTA_EXCEEDED naming the tenant; pool-short waits stay CAPACITY_EXHAUSTED', async () => {
    const c = await open({ tenantLeases: 1, agentLeases: 10 });
    await c.acquire(ask('a', 'agent-1', 'x1'), wait());
    const err = await c.acquire(ask('a', 'agent-2', 'x2'), wait(100)).catch((e: unknown) => e);
    expect(isGatehouseError(err, 'QUOTA_EXCEEDED')).toBe(true);
    expect((err as { details: unknown }).details).toMatchObject({ scope: 'tenant', tenant: 'a' });
    await c.acquire(ask('b', 'agent-3', 'z1'), wait());
    const short = await c.acquire(ask('c', 'agent-4', 'w1'), wait(100)).catch((e: unknown) => e);
    expect(isGatehouseError(short, 'CAPACITY_EXHAUSTED')).toBe(true);
  });
});
