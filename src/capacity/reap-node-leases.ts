import { isoTime } from '../core/index.js';
import type { Clock } from '../core/index.js';
import { transitionLease } from './lease.js';
import type { Lease } from './lease.js';
import type { LeaseStore } from './lease-store.js';
import { leaseLedger } from './lease-ledger.js';

/**
 * Marks every active lease of a node that another node took over `reaped`, each with its
 * `lease.reaped` audit record, as the reaper records one. What the leases still hold on the dead
 * node's host (processes, cgroups, workspaces) is removed by that node's reaper when it starts
 * again: nothing of it can be reached from here. Safe to repeat.
 * @returns the leases it reaped.
 */
export async function reapNodeLeases(o: {
  store: LeaseStore;
  clock: Clock;
  node: string;
  reason: string;
}): Promise<Lease[]> {
  const reaped: Lease[] = [];
  for (const lease of await o.store.active([o.node])) {
    const at = isoTime(o.clock.now());
    const ended: Lease = {
      ...lease,
      status: transitionLease(lease.status, 'reaped'),
      releasedAt: at,
      endReason: o.reason,
    };
    await o.store.update(
      ended,
      leaseLedger(ended, 'lease.reaped', 'reaper', at, { reason: o.reason }),
    );
    reaped.push(ended);
  }
  return reaped;
}
