import type { AuditPosition } from '../../core/index.js';
import type {
  InvocationQuery,
  InvocationRecord,
  InvocationStatus,
  InvocationStep,
  InvocationStore,
} from '../../invocation/index.js';
import { selectInvocations } from '../sql/invocation-query.js';
import { parseInvocation } from '../sql/invocation-rows.js';
import { ofNodes } from '../sql/node-rows.js';
import { InvocationSaves, saveStep } from './postgres-invocation-saves.js';
import { KeyLookups } from './postgres-key-lookups.js';
import type { PostgresDatabase } from './postgres-database.js';

/**
 * {@link InvocationStore} on PostgreSQL. The idempotency key is a unique constraint, so the same
 * key sent to several nodes at once is stored (and executed) once; the key lookups of a moment
 * share one statement (see {@link KeyLookups}).
 */
export class PostgresInvocationStore implements InvocationStore {
  private readonly saves = new InvocationSaves();
  private readonly keys: KeyLookups;

  constructor(private readonly db: PostgresDatabase) {
    this.keys = new KeyLookups(db.kysely);
  }

  async findByKey(
    tenant: string,
    principal: string,
    key: string,
  ): Promise<InvocationRecord | undefined> {
    return parseInvocation(await this.keys.find(tenant, principal, key));
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

  /**
   * Writes `step` in the node's next batch: with the other steps of that batch in a few multi-row
   * statements (see {@link InvocationSaves}), or alone when it creates or consumes an approval.
   */
  save(step: InvocationStep): Promise<AuditPosition> {
    if (step.consumeApproval !== undefined || step.approval)
      return this.db.write((tx) => saveStep(tx, step));
    return this.db.bulk(this.saves, step);
  }
}
