import type { LedgerEntries } from '../../core/index.js';
import type { Approval, ApprovalStatus, ApprovalStore } from '../../approvals/index.js';
import { approvalRow, consumedApproval } from '../sql/invocation-rows.js';
import { appendLedger } from './postgres-ledger.js';
import type { PostgresDatabase } from './postgres-database.js';
import type { Transaction } from './group-commit.js';

/** {@link ApprovalStore} on PostgreSQL; also used by the invocation store to create and consume. */
export class PostgresApprovalStore implements ApprovalStore {
  constructor(private readonly db: PostgresDatabase) {}

  async get(tenant: string, id: string): Promise<Approval | undefined> {
    return approvalIn(this.db.kysely, tenant, id);
  }

  async list(tenant: string, status?: ApprovalStatus, requestedBy?: string): Promise<Approval[]> {
    let q = this.db.kysely.selectFrom('approvals').select('record').where('tenant', '=', tenant);
    if (status) q = q.where('status', '=', status);
    if (requestedBy !== undefined) q = q.where('requested_by', '=', requestedBy);
    const rows = await q.orderBy('id', 'desc').limit(500).execute();
    return rows.map((r) => JSON.parse(r.record) as Approval);
  }

  async listByTool(
    tenant: string,
    tool: { id: string; version: string },
    statuses: ApprovalStatus[],
  ): Promise<Approval[]> {
    if (statuses.length === 0) return [];
    const rows = await this.db.kysely
      .selectFrom('approvals')
      .select('record')
      .where('tenant', '=', tenant)
      .where('tool_id', '=', `${tool.id}@${tool.version}`)
      .where('status', 'in', statuses)
      .orderBy('id')
      .execute();
    return rows.map((r) => JSON.parse(r.record) as Approval);
  }

  update(approval: Approval, ledger: LedgerEntries): Promise<boolean> {
    return this.db.write(async (tx) => {
      const r = await tx
        .updateTable('approvals')
        .set({
          status: approval.status,
          version: approval.version,
          record: JSON.stringify(approval),
          updated_at: new Date().toISOString(),
        })
        .where('id', '=', approval.id)
        .where('tenant', '=', approval.tenant)
        .where('version', '=', approval.version - 1)
        .executeTakeFirst();
      if (Number(r.numUpdatedRows) !== 1) return false;
      await appendLedger(tx, ledger);
      return true;
    });
  }
}

async function approvalIn(
  db: Transaction,
  tenant: string,
  id: string,
): Promise<Approval | undefined> {
  const row = await db
    .selectFrom('approvals')
    .select('record')
    .where('tenant', '=', tenant)
    .where('id', '=', id)
    .executeTakeFirst();
  return row ? (JSON.parse(row.record) as Approval) : undefined;
}

/** Inserts a new approval in `tx`. */
export async function insertApproval(tx: Transaction, a: Approval): Promise<void> {
  await tx.insertInto('approvals').values(approvalRow(a)).execute();
}

/**
 * Marks an approved approval consumed in `tx` (compare-and-set on its version, so of two nodes
 * consuming it at once one fails).
 * @throws when it is not `approved` any more: the whole step then rolls back.
 */
export async function consumeApproval(
  tx: Transaction,
  tenant: string,
  id: string,
  at: string,
): Promise<Approval> {
  const a = await approvalIn(tx, tenant, id);
  const consumed = consumedApproval(a, id, at);
  const r = await tx
    .updateTable('approvals')
    .set({
      status: 'consumed',
      version: consumed.version,
      record: JSON.stringify(consumed),
      updated_at: at,
    })
    .where('id', '=', id)
    .where('version', '=', consumed.version - 1)
    .executeTakeFirst();
  if (Number(r.numUpdatedRows) !== 1) {
    throw new Error(`approval ${id} changed while it was being consumed`);
  }
  return consumed;
}
