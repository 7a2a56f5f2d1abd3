import type { LedgerEntries } from '../../core/index.js';
import type { Approval, ApprovalStatus, ApprovalStore } from '../../approvals/index.js';
import { approvalRow, consumedApproval } from '../sql/invocation-rows.js';
import { appendLedger } from './sqlite-ledger.js';
import type { SqliteDatabase } from './sqlite-database.js';

/** {@link ApprovalStore} on SQLite; also used by the invocation store to create and consume. */
export class SqliteApprovalStore implements ApprovalStore {
  constructor(private readonly db: SqliteDatabase) {}

  get(tenant: string, id: string): Promise<Approval | undefined> {
    const row = this.db.first(
      this.db.kysely
        .selectFrom('approvals')
        .select('record')
        .where('tenant', '=', tenant)
        .where('id', '=', id),
    );
    return Promise.resolve(row ? (JSON.parse(row.record) as Approval) : undefined);
  }

  list(tenant: string, status?: ApprovalStatus, requestedBy?: string): Promise<Approval[]> {
    let q = this.db.kysely.selectFrom('approvals').select('record').where('tenant', '=', tenant);
    if (status) q = q.where('status', '=', status);
    if (requestedBy !== undefined) q = q.where('requested_by', '=', requestedBy);
    return Promise.resolve(
      this.db.all(q.orderBy('id', 'desc').limit(500)).map((r) => JSON.parse(r.record) as Approval),
    );
  }

  listByTool(
    tenant: string,
    tool: { id: string; version: string },
    statuses: ApprovalStatus[],
  ): Promise<Approval[]> {
    if (statuses.length === 0) return Promise.resolve([]);
    const rows = this.db.all(
      this.db.kysely
        .selectFrom('approvals')
        .select('record')
        .where('tenant', '=', tenant)
        .where('tool_id', '=', `${tool.id}@${tool.version}`)
        .where('status', 'in', statuses)
        .orderBy('id'),
    );
    return Promise.resolve(rows.map((r) => JSON.parse(r.record) as Approval));
  }

  update(approval: Approval, ledger: LedgerEntries): Promise<boolean> {
    return this.db.write(() => {
      const changed = this.db.run(
        this.db.kysely
          .updateTable('approvals')
          .set({
            status: approval.status,
            version: approval.version,
            record: JSON.stringify(approval),
            updated_at: new Date().toISOString(),
          })
          .where('id', '=', approval.id)
          .where('tenant', '=', approval.tenant)
          .where('version', '=', approval.version - 1),
      ).changes;
      if (changed !== 1) return false;
      appendLedger(this.db, ledger);
      return true;
    });
  }

  /** Inserts a new approval; call inside a write. */
  insertWithin(a: Approval): void {
    this.db.run(this.db.kysely.insertInto('approvals').values(approvalRow(a)));
  }

  /**
   * Marks an approved approval consumed; call inside a write.
   * @throws when it is not `approved` any more (consumed by a concurrent call, expired,
   *   invalidated): the whole step then rolls back, so an approval is used exactly once.
   */
  consumeWithin(tenant: string, id: string, at: string): Approval {
    const row = this.db.first(
      this.db.kysely
        .selectFrom('approvals')
        .select('record')
        .where('tenant', '=', tenant)
        .where('id', '=', id),
    );
    const a = row ? (JSON.parse(row.record) as Approval) : undefined;
    const consumed = consumedApproval(a, id, at);
    const changed = this.db.run(
      this.db.kysely
        .updateTable('approvals')
        .set({
          status: 'consumed',
          version: consumed.version,
          record: JSON.stringify(consumed),
          updated_at: at,
        })
        .where('id', '=', id)
        .where('version', '=', consumed.version - 1),
    ).changes;
    if (changed !== 1) throw new Error(`approval ${id} changed while it was being consumed`);
    return consumed;
  }
}
