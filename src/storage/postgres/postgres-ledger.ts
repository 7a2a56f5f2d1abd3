import { sql } from 'kysely';
import type { AuditPosition, AuditRecordDraft, LedgerEntries } from '../../core/index.js';
import { auditRow, outboxRow } from '../sql/audit-rows.js';
import { OUTBOX_CHANNEL } from './outbox-listener.js';
import { storeCompletedSubtrees } from './postgres-audit-nodes.js';
import type { PostgresDatabase } from './postgres-database.js';
import type { Transaction } from './group-commit.js';

/**
 * Appends audit records and outbox events in `tx`, the transaction of the state change that caused
 * them. Each tenant's indices are reserved by advancing its tree head (`audit_heads`) with an
 * upsert, which holds the head's row lock until commit: appends from any node extend one tree, in
 * turn. Heads are taken in tenant order, so two transactions never wait on each other in a cycle.
 * @returns the position of each audit record, in order.
 */
export async function appendLedger(
  tx: Transaction,
  entries: LedgerEntries,
): Promise<AuditPosition[]> {
  const counts = new Map<string, number>();
  for (const d of entries.audit) counts.set(d.tenant, (counts.get(d.tenant) ?? 0) + 1);
  const next = new Map<string, number>();
  for (const tenant of [...counts.keys()].sort()) {
    const n = counts.get(tenant)!;
    const head = await tx
      .insertInto('audit_heads')
      .values({ tenant, size: n })
      .onConflict((oc) => oc.column('tenant').doUpdateSet({ size: sql`audit_heads.size + ${n}` }))
      .returning('size')
      .executeTakeFirstOrThrow();
    next.set(tenant, Number(head.size) - n);
  }
  const positions: AuditPosition[] = [];
  for (const draft of entries.audit) {
    const index = next.get(draft.tenant)!;
    const { row, leaf } = auditRow(draft, index);
    await tx.insertInto('audit_records').values(row).execute();
    await storeCompletedSubtrees(tx, draft.tenant, index, leaf);
    positions.push({ index, treeSize: index + 1 });
    next.set(draft.tenant, index + 1);
  }
  if (entries.events.length > 0) {
    await tx.insertInto('outbox').values(entries.events.map(outboxRow)).execute();
    // Delivered at commit (once per transaction): other nodes' event streams read the outbox.
    await sql`select pg_notify(${OUTBOX_CHANNEL}, '')`.execute(tx);
  }
  return positions;
}

/** Appends audit records on their own, in a write of their own (nothing for an empty list). */
export async function appendAuditRecords(
  db: PostgresDatabase,
  records: AuditRecordDraft[],
): Promise<void> {
  if (records.length === 0) return;
  await db.write((tx) => appendLedger(tx, { audit: records, events: [] }));
}
