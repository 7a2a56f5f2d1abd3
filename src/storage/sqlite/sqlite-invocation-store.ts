import type { AuditPosition } from '../../core/index.js';
import type {
  InvocationQuery,
  InvocationRecord,
  InvocationStatus,
  InvocationStep,
  InvocationStore,
} from '../../invocation/index.js';
import { settledMeanwhile } from '../../invocation/index.js';
import { selectInvocations } from '../sql/invocation-query.js';
import { approvalConsumedError, invocationRow, parseInvocation } from '../sql/invocation-rows.js';
import { ofNodes } from '../sql/node-rows.js';
import { SqliteApprovalStore } from './sqlite-approval-store.js';
import { appendLedger } from './sqlite-ledger.js';
import type { SqliteDatabase } from './sqlite-database.js';

/** {@link InvocationStore} on SQLite: the record as JSON beside the columns it is looked up by. */
export class SqliteInvocationStore implements InvocationStore {
  private readonly approvals: SqliteApprovalStore;

  constructor(private readonly db: SqliteDatabase) {
    this.approvals = new SqliteApprovalStore(db);
  }

  findByKey(tenant: string, principal: string, key: string): Promise<InvocationRecord | undefined> {
    const row = this.db.firstPrepared(
      'invocation-by-key',
      (p) =>
        this.db.kysely
          .selectFrom('invocations')
          .select('record')
          .where('tenant', '=', p('tenant'))
          .where('principal', '=', p('principal'))
          .where('idempotency_key', '=', p('key'))
          .orderBy('attempt', 'desc')
          .limit(1),
      { tenant, principal, key },
    );
    return Promise.resolve(parseInvocation(row?.record));
  }

  get(tenant: string, id: string): Promise<InvocationRecord | undefined> {
    const q = this.db.kysely
      .selectFrom('invocations')
      .select('record')
      .where('id', '=', id)
      .where('tenant', '=', tenant);
    return Promise.resolve(parseInvocation(this.db.first(q)?.record));
  }

  list(tenant: string, query: InvocationQuery): Promise<InvocationRecord[]> {
    const q = this.db.kysely.selectFrom('invocations').select('record');
    const rows = this.db.all(selectInvocations(q, tenant, query));
    return Promise.resolve(rows.map((r) => parseInvocation(r.record)!));
  }

  listByStatus(
    status: InvocationStatus,
    nodes?: readonly (string | null)[],
  ): Promise<InvocationRecord[]> {
    let q = this.db.kysely.selectFrom('invocations').select('record').where('status', '=', status);
    if (nodes) q = q.where(ofNodes(nodes));
    const rows = this.db.all(q.orderBy('id'));
    return Promise.resolve(rows.map((r) => parseInvocation(r.record)!));
  }

  receipt(tenant: string, id: string): Promise<unknown> {
    const row = this.db.first(
      this.db.kysely
        .selectFrom('receipts')
        .select('envelope')
        .where('invocation_id', '=', id)
        .where('tenant', '=', tenant),
    );
    return Promise.resolve(row ? (JSON.parse(row.envelope) as unknown) : undefined);
  }

  save(step: InvocationStep): Promise<AuditPosition> {
    return this.db.write(() => {
      if (step.consumeApproval !== undefined) {
        try {
          this.approvals.consumeWithin(
            step.record.tenant,
            step.consumeApproval,
            step.record.updatedAt,
          );
        } catch (err) {
          throw approvalConsumedError(step.consumeApproval, err);
        }
      }
      if (step.expectedStatus !== undefined) {
        // Every step after a call's first is fenced so: a prepared statement, not a new query.
        const found = this.db.firstPrepared(
          'invocation-status',
          (p) =>
            this.db.kysely.selectFrom('invocations').select('status').where('id', '=', p('id')),
          { id: step.record.id },
        )?.status;
        if (found !== step.expectedStatus)
          throw settledMeanwhile(step.record.id, step.expectedStatus, found);
      }
      if (step.approval) this.approvals.insertWithin(step.approval);
      const positions = appendLedger(this.db, step.ledger);
      const last = positions[positions.length - 1];
      if (!last) throw new Error('an invocation step must append at least one audit record');
      const record: InvocationRecord = { ...step.record, audit: last };
      const receipt = step.seal?.(last);
      const row = invocationRow(record);
      this.db.runPrepared(
        'invocation-upsert',
        (p) =>
          this.db.kysely
            .insertInto('invocations')
            .values({
              id: p('id'),
              tenant: p('tenant'),
              principal: p('principal'),
              idempotency_key: p('key'),
              attempt: p('attempt'),
              request_hash: p('hash'),
              status: p('status'),
              tool_id: p('tool'),
              record: p('record'),
              created_at: p('createdAt'),
              updated_at: p('updatedAt'),
              node: p('node'),
              tool_name: p('toolName'),
              agent_id: p('agent'),
              environment: p('environment'),
            })
            .onConflict((oc) =>
              oc.column('id').doUpdateSet({
                status: p('status'),
                record: p('record'),
                updated_at: p('updatedAt'),
                node: p('node'),
              }),
            ),
        {
          id: row.id,
          tenant: row.tenant,
          principal: row.principal,
          key: row.idempotency_key,
          attempt: row.attempt,
          hash: row.request_hash,
          status: row.status,
          tool: row.tool_id,
          record: row.record,
          createdAt: row.created_at,
          updatedAt: row.updated_at,
          node: row.node,
          toolName: row.tool_name,
          agent: row.agent_id,
          environment: row.environment,
        },
      );
      if (receipt !== undefined) {
        this.db.runPrepared(
          'receipt-upsert',
          (p) =>
            this.db.kysely
              .insertInto('receipts')
              .values({ invocation_id: p('id'), tenant: p('tenant'), envelope: p('envelope') })
              .onConflict((oc) =>
                oc.column('invocation_id').doUpdateSet({ envelope: p('envelope') }),
              ),
          { id: record.id, tenant: record.tenant, envelope: JSON.stringify(receipt) },
        );
      }
      step.record.audit = last;
      return last;
    });
  }
}
