import { sql } from 'kysely';
import type { OnConflictBuilder } from 'kysely';
import type { Tables } from '../schema/tables.js';
import { OUTBOX_CHANNEL } from './outbox-listener.js';
import { insertLedgerRows } from './postgres-ledger.js';
import type { LedgerRows } from './postgres-ledger.js';
import type { Transaction } from './group-commit.js';

/**
 * Most parameters put in one statement (PostgreSQL takes at most 65,535); a batch with more rows
 * than that goes in several statements.
 */
const MOST_PARAMETERS = 30_000;

/** The invocation rows of a batch of steps: new calls, changed ones, and their receipts. */
export interface InvocationRows {
  fresh: Tables['invocations'][];
  updated: Tables['invocations'][];
  receipts: Tables['receipts'][];
}

/**
 * Inserts the ledger rows and invocation rows of a batch of steps in `tx`. The tenants' tree heads
 * are locked from the reservation of the audit indices until commit (and the batch holds the
 * database's write lock throughout), so each round trip here is time every other node waits: all
 * the rows go in one statement (one data-modifying `with` per table), unless they are too many.
 * @returns how many new calls were inserted (one whose key or id is stored already is skipped).
 */
export async function insertSaveRows(
  tx: Transaction,
  ledger: LedgerRows,
  rows: InvocationRows,
): Promise<number> {
  const parameters = [ledger.audit, ledger.nodes, ledger.outbox, rows.fresh, rows.updated]
    .map((list) => list.length * (list[0] ? Object.keys(list[0]).length : 0))
    .reduce((a, b) => a + b, rows.receipts.length * 3);
  if (parameters > MOST_PARAMETERS) return insertApart(tx, ledger, rows);
  // Each data-modifying `with` runs whether or not the final select reads it; `fresh` always is
  // there (empty without new calls), as the count of what it inserted is the answer.
  let q = tx.with('fresh', (db) =>
    rows.fresh.length === 0
      ? db
          .selectFrom('invocations')
          .select('id')
          .where(sql<boolean>`false`)
      : db
          .insertInto('invocations')
          .values(rows.fresh)
          .onConflict((oc) => oc.doNothing())
          .returning('id'),
  );
  if (ledger.audit.length > 0)
    q = q.with('a', (db) => db.insertInto('audit_records').values(ledger.audit));
  if (ledger.nodes.length > 0)
    q = q.with('n', (db) => db.insertInto('audit_nodes').values(ledger.nodes));
  if (ledger.outbox.length > 0)
    q = q.with('o', (db) => db.insertInto('outbox').values(ledger.outbox));
  if (rows.updated.length > 0)
    q = q.with('u', (db) =>
      db.insertInto('invocations').values(rows.updated).onConflict(updateCall),
    );
  if (rows.receipts.length > 0)
    q = q.with('r', (db) =>
      db.insertInto('receipts').values(rows.receipts).onConflict(updateReceipt),
    );
  // Delivered at commit (once per transaction): other nodes' event streams read the outbox.
  const notify = ledger.outbox.length > 0 ? sql`pg_notify(${OUTBOX_CHANNEL}, '')` : sql`null`;
  const r = await q
    .selectNoFrom([sql<number>`(select count(*) from fresh)`.as('inserted'), notify.as('notified')])
    .executeTakeFirstOrThrow();
  return Number(r.inserted);
}

/** {@link insertSaveRows} in a statement per table (and per thousand rows). */
async function insertApart(
  tx: Transaction,
  ledger: LedgerRows,
  rows: InvocationRows,
): Promise<number> {
  await insertLedgerRows(tx, ledger);
  let inserted = 0;
  for (let i = 0; i < rows.fresh.length; i += 1_000) {
    const done = await tx
      .insertInto('invocations')
      .values(rows.fresh.slice(i, i + 1_000))
      .onConflict((oc) => oc.doNothing())
      .returning('id')
      .execute();
    inserted += done.length;
  }
  for (let i = 0; i < rows.updated.length; i += 1_000) {
    await tx
      .insertInto('invocations')
      .values(rows.updated.slice(i, i + 1_000))
      .onConflict(updateCall)
      .execute();
  }
  for (let i = 0; i < rows.receipts.length; i += 1_000) {
    await tx
      .insertInto('receipts')
      .values(rows.receipts.slice(i, i + 1_000))
      .onConflict(updateReceipt)
      .execute();
  }
  return inserted;
}

/** A stored call is updated to the step's status, record and node. */
function updateCall(oc: OnConflictBuilder<Tables, 'invocations'>) {
  return oc.column('id').doUpdateSet((eb) => ({
    status: eb.ref('excluded.status'),
    record: eb.ref('excluded.record'),
    updated_at: eb.ref('excluded.updated_at'),
    node: eb.ref('excluded.node'),
  }));
}

/** A call's stored receipt is replaced by the one this batch signed. */
function updateReceipt(oc: OnConflictBuilder<Tables, 'receipts'>) {
  return oc
    .column('invocation_id')
    .doUpdateSet((eb) => ({ envelope: eb.ref('excluded.envelope') }));
}
