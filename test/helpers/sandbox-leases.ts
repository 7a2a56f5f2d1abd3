import { join } from 'node:path';
import { ExecutionCapacity, Reaper } from '../../src/capacity/index.js';
import { ManualClock, SequentialIds } from '../../src/core/index.js';
import type { EgressProxy } from '../../src/egress/index.js';
import { SandboxLeases } from '../../src/invocation/index.js';
import type { LeaseAsk } from '../../src/invocation/index.js';
import type { Workspaces } from '../../src/sandbox/index.js';
import { MemoryLeaseStore } from './memory-lease-store.js';

/** One call's lease ask with nothing asked for: no needs, no credentials. */
export const callAsk: LeaseAsk = {
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

/**
 * SandboxLeases over `workspaces` (real ones), a four-lease pool on a manual clock, and the reaper
 * the gateway runs beside them. The egress proxy is a stand-in that opens a socket path in `root`:
 * the unit here is the lease's workspace and capacity, not egress (see the proxy's own tests).
 */
export async function leasesOver(root: string, workspaces: Workspaces) {
  const clock = new ManualClock();
  const capacity = await ExecutionCapacity.open({
    store: new MemoryLeaseStore(),
    clock,
    ids: new SequentialIds('lease'),
    pools: [{ name: 'default', cpus: 2, memoryBytes: 2 ** 30, gpus: 0, leases: 4 }],
  });
  const egress = {
    open: () => Promise.resolve({ socketPath: join(root, 'proxy.sock'), close: async () => {} }),
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
    // The call's invocation is not stored in these tests: read as done, as the gateway's check does.
    holderDone: () => Promise.resolve(true),
    workspaces: () => workspaces.existing(),
    removeWorkspace: (id) => workspaces.remove(id, 'plain'),
  });
  return { clock, capacity, leases, reaper };
}
