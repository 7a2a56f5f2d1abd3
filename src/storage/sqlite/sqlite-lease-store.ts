import type { LedgerEntries } from '../../core/index.js';
import type { Lease, LeaseStore } from '../../capacity/index.js';
import { ofNodes } from '../sql/node-rows.js';
import { leaseRow } from '../sql/invocation-rows.js';
import { appendLedger } from './sqlite-ledger.js';
import type { SqliteDatabase } from './sqlite-database.js';

/** {@link LeaseStore} on SQLite. */
export class SqliteLeaseStore implements LeaseStore {
  constructor(private readonly db: SqliteDatabase) {}

  insert(lease: Lease, ledger: LedgerEntries): Promise<void> {
    return this.db.write(() => {
      this.db.run(this.db.kysely.insertInto('leases').values(leaseRow(lease)));
      appendLedger(this.db, ledger);
    });
  }

  update(lease: Lease, ledger: LedgerEntries): Promise<void> {
    return this.db.write(() => {
      this.db.run(
        this.db.kysely
          .updateTable('leases')
          .set({
            status: lease.status,
            record: JSON.stringify(lease),
            expires_at: lease.expiresAt,
            updated_at: lease.releasedAt ?? lease.createdAt,
          })
          .where('id', '=', lease.id),
      );
      appendLedger(this.db, ledger);
    });
  }

  active(nodes?: readonly (string | null)[]): Promise<Lease[]> {
    let q = this.db.kysely.selectFrom('leases').select('record').where('status', '=', 'active');
    if (nodes) q = q.where(ofNodes(nodes));
    const rows = this.db.all(q.orderBy('id'));
    return Promise.resolve(rows.map((r) => JSON.parse(r.record) as Lease));
  }

  activeFor(tenant: string, holder: string): Promise<Lease | undefined> {
    const row = this.db.first(
      this.db.kysely
        .selectFrom('leases')
        .select('record')
        .where('tenant', '=', tenant)
        .where('holder', '=', holder)
        .where('status', '=', 'active'),
    );
    return Promise.resolve(row ? (JSON.parse(row.record) as Lease) : undefined);
  }
}
