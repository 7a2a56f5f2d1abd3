import type {
  AuditStore,
  Checkpoint,
  SizeRange,
  StoredAuditRecord,
  SubtreeRef,
} from '../../audit/index.js';
import type { AuditRecordDraft } from '../../core/index.js';
import { checkpointRow, sizeAfter, toCheckpoint, toStoredAuditRecord } from '../sql/audit-rows.js';
import { readSubtreeHashes } from './sqlite-audit-nodes.js';
import type { SqliteDatabase } from './sqlite-database.js';
import { appendAuditRecords } from './sqlite-ledger.js';

/** {@link AuditStore} on SQLite. */
export class SqliteAuditStore implements AuditStore {
  constructor(private readonly db: SqliteDatabase) {}

  append(records: AuditRecordDraft[]): Promise<void> {
    return appendAuditRecords(this.db, records);
  }

  // size and records are fixed-shape queries on prepared statements: a proof asks both.
  size(tenant: string): Promise<number> {
    const r = this.db.firstPrepared(
      'audit-size',
      (p) =>
        this.db.kysely
          .selectFrom('audit_records')
          .select((eb) => eb.fn.max('idx').as('top'))
          .where('tenant', '=', p('tenant')),
      { tenant },
    );
    return Promise.resolve(sizeAfter(r?.top));
  }

  records(tenant: string, from: number, to: number): Promise<StoredAuditRecord[]> {
    const rows = this.db.allPrepared(
      'audit-records',
      (p) =>
        this.db.kysely
          .selectFrom('audit_records')
          .selectAll()
          .where('tenant', '=', p('tenant'))
          .where('idx', '>=', p('from'))
          .where('idx', '<', p('to'))
          .orderBy('idx'),
      { tenant, from, to },
    );
    return Promise.resolve(rows.map(toStoredAuditRecord));
  }

  subtreeHashes(tenant: string, refs: readonly SubtreeRef[]): Promise<(Buffer | null)[]> {
    return Promise.resolve(readSubtreeHashes(this.db, tenant, refs));
  }

  tenants(): Promise<string[]> {
    const rows = this.db.all(
      this.db.kysely.selectFrom('audit_records').select('tenant').distinct().orderBy('tenant'),
    );
    return Promise.resolve(rows.map((r) => r.tenant));
  }

  saveCheckpoint(cp: Checkpoint): Promise<void> {
    return this.db.write(() => {
      this.db.run(
        this.db.kysely
          .insertInto('checkpoints')
          .values(checkpointRow(cp))
          .onConflict((oc) => oc.columns(['tenant', 'tree_size']).doNothing()),
      );
    });
  }

  checkpoints(tenant: string, sizes?: SizeRange): Promise<Checkpoint[]> {
    let query = this.db.kysely.selectFrom('checkpoints').selectAll().where('tenant', '=', tenant);
    if (sizes) {
      query = query.where('tree_size', '>=', sizes.from).where('tree_size', '<', sizes.to);
    }
    const rows = this.db.all(query.orderBy('tree_size'));
    return Promise.resolve(rows.map(toCheckpoint));
  }
}
