import type { AuditPosition } from '../../core/index.js';
import type {
  InvocationQuery,
  InvocationRecord,
  InvocationStatus,
  InvocationStep,
  InvocationStore,
} from '../../invocation/index.js';
import { selectInvocations } from '../sql/invocation-query.js';
import { keyTaken, settledMeanwhile } from '../../invocation/index.js';
import { approvalConsumedError, invocationRow, parseInvocation } from '../sql/invocation-rows.js';
import { ofNodes } from '../sql/node-rows.js';
import { consumeApproval, insertApproval } from './postgres-approval-store.js';
import { appendLedger } from './postgres-ledger.js';
import type { PostgresDatabase } from './postgres-database.js';

/**
 * {@link InvocationStore} on PostgreSQL. The idempotency key is a unique constraint, so the same
 * key sent to several nodes at once is stored (and executed) once.
 */
export class PostgresInvocationStore implements InvocationStore {
  constructor(private readonly db: PostgresDatabase) {}

  async findByKey(
    tenant: string,
    principal: string,
    key: string,
  ): Promise<InvocationRecord | undefined> {
    const row = await this.db.kysely
      .selectFrom('invocations')
      .select('record')
      .where('tenant', '=', tenant)
      .where('principal', '=', principal)
      .where('idempotency_key', '=', key)
      .orderBy('attempt', 'desc')
      .limit(1)
      .executeTakeFirst();
    return parseInvocation(row?.record);
  }

  async get(tenant: string, id: string): Promise<InvocationRecord | undefined> {
    const row = await this.db.kysely
      .selectFrom('invocations')
      .select('record')
      .where('id', '=', id)
      .where('tenant', '=', tenant)
      .executeTakeFirst();
    return parseInvocation(row?.record);
  }

  async list(tenant: string, query: InvocationQuery): Promise<InvocationRecord[]> {
    const q = this.db.kysely.selectFrom('invocations').select('record');
    const rows = await selectInvocations(q, tenant, query).execute();
    return rows.map((r) => parseInvocation(r.record)!);
  }

  async listByStatus(
    status: InvocationStatus,
    nodes?: readonly (string | null)[],
  ): Promise<InvocationRecord[]> {
    let q = this.db.kysely.selectFrom('invocations').select('record').where('status', '=', status);
    if (nodes) q = q.where(ofNodes(nodes));
    const rows = await q.orderBy('id').execute();
    return rows.map((r) => parseInvocation(r.record)!);
  }

  async receipt(tenant: string, id: string): Promise<unknown> {
    const row = await this.db.kysely
      .selectFrom('receipts')
      .select('envelope')
      .where('invocation_id', '=', id)
      .where('tenant', '=', tenant)
      .executeTakeFirst();
    return row ? (JSON.parse(row.envelope) as unknown) : undefined;
  }

  save(step: InvocationStep): Promise<AuditPosition> {
    return this.db.write(async (tx) => {
      const id = step.consumeApproval;
      if (id !== undefined) {
        try {
          await consumeApproval(tx, step.record.tenant, id, step.record.updatedAt);
        } catch (err) {
          throw approvalConsumedError(id, err);
        }
      }
      if (step.expectedStatus !== undefined) {
        // Writes of all nodes take turns (the write lock): nothing changes it before this commits.
        const found = (
          await tx
            .selectFrom('invocations')
            .select('status')
            .where('id', '=', step.record.id)
            .executeTakeFirst()
        )?.status;
        if (found !== step.expectedStatus)
          throw settledMeanwhile(step.record.id, step.expectedStatus, found);
      }
      if (step.approval) await insertApproval(tx, step.approval);
      const positions = await appendLedger(tx, step.ledger);
      const last = positions[positions.length - 1];
      if (!last) throw new Error('an invocation step must append at least one audit record');
      const record: InvocationRecord = { ...step.record, audit: last };
      const receipt = step.seal?.(last);
      const row = invocationRow(record);
      try {
        await tx
          .insertInto('invocations')
          .values(row)
          .onConflict((oc) =>
            oc.column('id').doUpdateSet({
              status: row.status,
              record: row.record,
              updated_at: row.updated_at,
              node: row.node,
            }),
          )
          .execute();
      } catch (err) {
        // The key's unique constraint: another node stored this key's call first.
        if (isUniqueViolation(err, 'invocations_idempotency'))
          throw keyTaken(record.idempotencyKey, err);
        throw err;
      }
      if (receipt !== undefined) {
        const envelope = JSON.stringify(receipt);
        await tx
          .insertInto('receipts')
          .values({ invocation_id: record.id, tenant: record.tenant, envelope })
          .onConflict((oc) => oc.column('invocation_id').doUpdateSet({ envelope }))
          .execute();
      }
      step.record.audit = last;
      return last;
    });
  }
}

/** True when `err` is PostgreSQL's unique violation (SQLSTATE 23505) of `constraint`. */
function isUniqueViolation(err: unknown, constraint: string): boolean {
  const e = err as { code?: unknown; constraint?: unknown };
  return e.code === '23505' && e.constraint === constraint;
}
