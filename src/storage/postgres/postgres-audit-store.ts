import type {
  AuditStore,
  Checkpoint,
  SizeRange,
  StoredAuditRecord,
  SubtreeRef,
} from '../../audit/index.js';
import type { AuditRecordDraft } from '../../core/index.js';
import { checkpointRow, sizeAfter, toCheckpoint, toStoredAuditRecord } from '../sql/audit-rows.js';
import { readSubtreeHashes } from './postgres-audit-nodes.js';
import type { PostgresDatabase } from './postgres-database.js';
import { appendAuditRecords } from './postgres-ledger.js';

/** {@link AuditStore} on PostgreSQL. */
export class PostgresAuditStore implements AuditStore {
  constructor(private readonly db: PostgresDatabase) {}

  append(records: AuditRecordDraft[]): Promise<void> {
    return appendAuditRecords(this.db, records);
  }

  async size(tenant: string): Promise<number> {
    const r = await this.db.kysely
      .selectFrom('audit_records')
      .select((eb) => eb.fn.max('idx').as('top'))
      .where('tenant', '=', tenant)
      .executeTakeFirst();
    return sizeAfter(r?.top);
  }

  async records(tenant: string, from: number, to: number): Promise<StoredAuditRecord[]> {
    const rows = await this.db.kysely
      .selectFrom('audit_records')
      .selectAll()
      .where('tenant', '=', tenant)
      .where('idx', '>=', from)
      .where('idx', '<', to)
      .orderBy('idx')
      .execute();
    return rows.map(toStoredAuditRecord);
  }

  subtreeHashes(tenant: string, refs: readonly SubtreeRef[]): Promise<(Buffer | null)[]> {
    return readSubtreeHashes(this.db.kysely, tenant, refs);
  }

  async tenants(): Promise<string[]> {
    const rows = await this.db.kysely
      .selectFrom('audit_records')
      .select('tenant')
      .distinct()
      .orderBy('tenant')
      .execute();
    return rows.map((r) => r.tenant);
  }

  async saveCheckpoint(cp: Checkpoint): Promise<void> {
    await this.db.write((tx) =>
      tx
        .insertInto('checkpoints')
        .values(checkpointRow(cp))
        .onConflict((oc) => oc.columns(['tenant', 'tree_size']).doNothing())
        .execute(),
    );
  }

  async checkpoints(tenant: string, sizes?: SizeRange): Promise<Checkpoint[]> {
    let query = this.db.kysely.selectFrom('checkpoints').selectAll().where('tenant', '=', tenant);
    if (sizes) {
      query = query.where('tree_size', '>=', sizes.from).where('tree_size', '<', sizes.to);
    }
    return (await query.orderBy('tree_size').execute()).map(toCheckpoint);
  }
}
