import { canonicalBytes } from '../../core/index.js';
import type { AuditPosition, AuditRecord, LedgerEntries } from '../../core/index.js';
import { leafHash } from '../../audit/index.js';
import type { SqliteDatabase } from './sqlite-database.js';

/**
 * Appends audit records (each at the next index of its tenant's log, stored as the JCS bytes that
 * are its Merkle leaf) and outbox events. Must run inside {@link SqliteDatabase.write}, so they
 * commit with the state change that caused them.
 * @returns the position of each audit record, in order.
 */
export function appendLedger(db: SqliteDatabase, entries: LedgerEntries): AuditPosition[] {
  const positions: AuditPosition[] = [];
  const next = new Map<string, number>();
  for (const draft of entries.audit) {
    let index = next.get(draft.tenant);
    if (index === undefined) {
      const row = db.first(
        db.kysely
          .selectFrom('audit_records')
          .select((eb) => eb.fn.max('idx').as('top'))
          .where('tenant', '=', draft.tenant),
      );
      index = row?.top === null || row?.top === undefined ? 0 : Number(row.top) + 1;
    }
    const record: AuditRecord = { ...draft, index };
    const bytes = canonicalBytes(record);
    db.run(
      db.kysely.insertInto('audit_records').values({
        tenant: draft.tenant,
        idx: index,
        record: bytes.toString('utf8'),
        leaf_hash: leafHash(bytes).toString('base64'),
      }),
    );
    positions.push({ index, treeSize: index + 1 });
    next.set(draft.tenant, index + 1);
  }
  for (const e of entries.events) {
    db.run(
      db.kysely.insertInto('outbox').values({
        tenant: e.tenant,
        type: e.type,
        subject: e.subject,
        at: e.at,
        data: JSON.stringify(e.data),
      }),
    );
  }
  return positions;
}
