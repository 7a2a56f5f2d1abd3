import type { LedgerEntries } from '../core/index.js';
import type { Lease } from './lease.js';

/** The audit record of a lease's change (`lease.granted`, `lease.released`, `lease.reaped`). */
export function leaseLedger(
  lease: Lease,
  type: string,
  actor: string,
  at: string,
  data: Record<string, unknown>,
): LedgerEntries {
  return {
    audit: [
      {
        tenant: lease.tenant,
        type,
        subject: `lease/${lease.id}`,
        at,
        actor,
        data: { leaseId: lease.id, holder: lease.holder, pool: lease.pool, ...data },
      },
    ],
    events: [],
  };
}
