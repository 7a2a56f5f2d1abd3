import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ExecutionCapacity, Reaper } from '../../src/capacity/index.js';
import { ManualClock, SequentialIds } from '../../src/core/index.js';
import type { EgressProxy } from '../../src/egress/index.js';
import { SandboxLeases } from '../../src/invocation/index.js';
import type { LeaseAsk } from '../../src/invocation/index.js';
import { Workspaces } from '../../src/sandbox/index.js';
import { MemoryLeaseStore } from '../helpers/memory-lease-store.js';

let root: string | undefined;
afterEach(() => {
  if (root) rmSync(root, { recursive: true, force: true });
  root = undefined;
});

const ask: LeaseAsk = {
  tenant: 't1',
  agent: 'a1',
  invocationId: 'inv-1',
  runId: null,
  attemptId: null,
  needs: {},
  timeoutMs: 1_000,
  credentials: { env: {}, files: [], leases: [] },
  signal: new AbortController().signal,
  onQueued: () => Promise.resolve(),
  onEgress: () => undefined,
};

describe('a lease being set up', () => {
  it('is left alone by a reaper pass that runs while its workspace is made', async () => {
    root = mkdtempSync(join(tmpdir(), 'gatehouse-leases-'));
    const clock = new ManualClock();
    const capacity = await ExecutionCapacity.open({
      store: new MemoryLeaseStore(),
      clock,
      ids: new SequentialIds('lease'),
      pools: [{ name: 'default', cpus: 2, memoryBytes: 2 ** 30, gpus: 0, leases: 4 }],
    });
    const workspaces = new Workspaces({ root, repositories: {} });
    const egress = {
      open: () => Promise.resolve({ socketPath: join(root!, 'proxy.sock'), close: async () => {} }),
    } as unknown as EgressProxy;
    const leases = new SandboxLeases({
      capacity,
      workspaces,
      egress,
      defaults: {
        pool: 'default',
        resources: { cpus: 1, memoryBytes: 2 ** 20, gpus: 0, pids: 16 },
        egressAllow: [],
        queueBudgetMs: 0,
        attemptTtlMs: 60_000,
        idleAttemptsPerAgent: 1,
      },
    });
    const reaper = new Reaper({
      capacity,
      clock,
      inUse: (lease) => leases.holds(lease.id),
      // The call's invocation is not stored yet: read as done, as the gateway's check does.
      holderDone: () => Promise.resolve(true),
      workspaces: () => workspaces.existing(),
      removeWorkspace: (id) => workspaces.remove(id, 'plain'),
    });
    // The pass runs between the workspace being made and the call attaching to the lease.
    const fresh = workspaces.fresh.bind(workspaces);
    let reaped: string[] | undefined;
    workspaces.fresh = async (id) => {
      const made = await fresh(id);
      reaped = await reaper.runOnce();
      return made;
    };
    const held = await leases.hold(ask);
    expect(reaped).toEqual([]);
    expect(existsSync(held.execution.workspace)).toBe(true);
    expect(capacity.activeLeases().map((l) => l.id)).toEqual([held.lease.id]);
    await held.done();
    expect(existsSync(held.execution.workspace)).toBe(false);
  });
});
