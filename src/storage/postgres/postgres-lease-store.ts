import type { LedgerEntries } from '../../core/index.js';
import type { Lease, LeaseStore } from '../../capacity/index.js';
import { ofNodes } from '../sql/node-rows.js';
import { leaseRow } from '../sql/invocation-rows.js';
import { appendLedger } from './postgres-ledger.js';
import type { PostgresDatabase } from './postgres-database.js';

/** {@link LeaseStore} on PostgreSQL. */
export class PostgresLeaseStore implements LeaseStore {
  constructor(private readonly db: PostgresDatabase) {}

  insert(lease: Lease, ledger: LedgerEntries): Promise<void> {
    return this.db.write(async (tx) => {
      await tx.insertInto('leases').values(leaseRow(lease)).execute();
      await appendLedger(tx, ledger);
    });
  }

  update(lease: Lease, ledger: LedgerEntries): Promise<void> {
    return this.db.write(async (tx) => {
      await tx
        .updateTable('leases')
        .set({
          status: lease.status,
          record: JSON.stringify(lease),
          expires_at: lease.expiresAt,
          updated_at: lease.releasedAt ?? lease.createdAt,
        })
        .where('id', '=', lease.id)
        .execute();
      await appendLedger(tx, ledger);
    });
  }

  async active(nodes?: readonly (string | null)[]): Promise<Lease[]> {
    let q = this.db.kysely.selectFrom('leases').select('record').where('status', '=', 'active');
    if (nodes) q = q.where(ofNodes(nodes));
    const rows = await q.orderBy('id').execute();
    return rows.map((r) => JSON.parse(r.record) as Lease);
  }

  async activeFor(tenant: string, holder: string): Promise<Lease | undefined> {
    const row = await this.db.kysely
      .selectFrom('leases')
      .select('record')
      .where('tenant', '=', tenant)
      .where('holder', '=', holder)
      .where('status', '=', 'active')
      .executeTakeFirst();
    return row ? (JSON.parse(row.record) as Lease) : undefined;
  }
}
