import type { AuditPosition, AuditRecordDraft, LedgerEntries } from '../../core/index.js';
import { auditRow, outboxRow, sizeAfter } from '../sql/audit-rows.js';
import { storeCompletedSubtrees } from './sqlite-audit-nodes.js';
import type { SqliteDatabase } from './sqlite-database.js';

/**
 * Appends audit records (each at the next index of its tenant's log, stored as the JCS bytes that
 * are its Merkle leaf, with the hashes of the subtrees it completes) and outbox events. Must run
 * inside {@link SqliteDatabase.write}, so they commit with the state change that caused them.
 * @returns the position of each audit record, in order.
 */
export function appendLedger(db: SqliteDatabase, entries: LedgerEntries): AuditPosition[] {
  const k = db.kysely;
  const positions: AuditPosition[] = [];
  for (const draft of entries.audit) {
    // The next index of each tenant is read once per transaction, then counted in its cache.
    const cacheKey = `audit-next:${draft.tenant}`;
    let index = db.transactionCache.get(cacheKey) as number | undefined;
    if (index === undefined) {
      const row = db.firstPrepared(
        'audit-top',
        (p) =>
          k
            .selectFrom('audit_records')
            .select((eb) => eb.fn.max('idx').as('top'))
            .where('tenant', '=', p('tenant')),
        { tenant: draft.tenant },
      );
      index = sizeAfter(row?.top);
    }
    const { row, leaf } = auditRow(draft, index);
    db.runPrepared(
      'audit-insert',
      (p) =>
        k.insertInto('audit_records').values({
          tenant: p('tenant'),
          idx: p('idx'),
          record: p('record'),
          leaf_hash: p('leaf'),
        }),
      { tenant: row.tenant, idx: row.idx, record: row.record, leaf: row.leaf_hash },
    );
    storeCompletedSubtrees(db, draft.tenant, index, leaf);
    positions.push({ index, treeSize: index + 1 });
    db.transactionCache.set(cacheKey, index + 1);
  }
  for (const e of entries.events) {
    db.runPrepared(
      'outbox-insert',
      (p) =>
        k.insertInto('outbox').values({
          tenant: p('tenant'),
          type: p('type'),
          subject: p('subject'),
          at: p('at'),
          data: p('data'),
          owner: p('owner'),
        }),
      outboxRow(e),
    );
  }
  return positions;
}

/**
 * Appends audit records on their own, in one write transaction of their own (nothing for an empty
 * list): `AuditStore.append` and `SecretStore.appendAudit` on SQLite.
 */
export function appendAuditRecords(db: SqliteDatabase, records: AuditRecordDraft[]): Promise<void> {
  if (records.length === 0) return Promise.resolve();
  return db.write(() => {
    appendLedger(db, { audit: records, events: [] });
  });
}
