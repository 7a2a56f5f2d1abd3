import { sql } from 'kysely';
import type { AuditPosition } from '../../core/index.js';
import type { InvocationRecord, InvocationStep } from '../../invocation/index.js';
import { keyTaken, settledMeanwhile } from '../../invocation/index.js';
import { approvalConsumedError, invocationRow } from '../sql/invocation-rows.js';
import { consumeApproval, insertApproval } from './postgres-approval-store.js';
import { appendLedger, prepareLedgers } from './postgres-ledger.js';
import { insertSaveRows } from './postgres-save-rows.js';
import type { InvocationRows } from './postgres-save-rows.js';
import type { BulkWriter, Settled, Transaction } from './group-commit.js';

/**
 * The invocation steps of one batch, written together: a fixed handful of statements for all of
 * them (the fence check, the ledger, the records, the receipts), not a handful each. Anything out
 * of the ordinary (a key another node stored first, one call twice) rolls the bulk back and writes
 * the steps one by one as {@link saveStep} does, each failing alone. Steps that create or consume
 * an approval are not given here (see {@link PostgresInvocationStore.save}).
 */
export class InvocationSaves implements BulkWriter<InvocationStep, AuditPosition> {
  async run(
    tx: Transaction,
    steps: readonly InvocationStep[],
    savepoint: string,
  ): Promise<Settled<AuditPosition>[]> {
    // The batch set the savepoint (with its begin, when this is its first bulk): no round trip
    // of its own while the batch holds the write lock.
    try {
      return await saveTogether(tx, steps);
    } catch {
      await sql`rollback to savepoint ${sql.id(savepoint)}`.execute(tx);
    }
    const out: Settled<AuditPosition>[] = [];
    for (const step of steps) {
      await sql`savepoint write`.execute(tx);
      try {
        out.push({ ok: true, value: await saveStep(tx, step) });
        await sql`release savepoint write`.execute(tx);
      } catch (error) {
        out.push({ ok: false, error });
        await sql`rollback to savepoint write`.execute(tx);
      }
    }
    return out;
  }
}

/**
 * Writes `steps` in a few multi-row statements. A fenced step whose call was settled meanwhile
 * fails alone (nothing of it written).
 * @throws when the bulk cannot be written as one (a new call's key or id is stored already, one
 *   call twice, a failed statement): the caller rolls it back and writes the steps one by one.
 */
async function saveTogether(
  tx: Transaction,
  steps: readonly InvocationStep[],
): Promise<Settled<AuditPosition>[]> {
  const ids = steps.map((s) => s.record.id);
  if (new Set(ids).size !== ids.length) throw new Error('one invocation twice in a bulk');
  const settled: (Settled<AuditPosition> | undefined)[] = steps.map(() => undefined);
  const fenced = steps.filter((s) => s.expectedStatus !== undefined).map((s) => s.record.id);
  if (fenced.length > 0) {
    // Writes of all nodes take turns (the write lock): nothing changes these before this commits.
    const rows = await tx
      .selectFrom('invocations')
      .select(['id', 'status'])
      .where('id', 'in', fenced)
      .execute();
    const found = new Map(rows.map((r) => [r.id, r.status]));
    steps.forEach((s, i) => {
      const status = found.get(s.record.id);
      if (s.expectedStatus !== undefined && status !== s.expectedStatus)
        settled[i] = { ok: false, error: settledMeanwhile(s.record.id, s.expectedStatus, status) };
    });
  }
  const live = steps.flatMap((s, i) => (settled[i] === undefined ? [{ s, i }] : []));
  const ledger = await prepareLedgers(
    tx,
    live.map(({ s }) => s.ledger),
  );
  const rows: InvocationRows = { fresh: [], updated: [], receipts: [] };
  const lasts = live.map(({ s }, k) => {
    const positions = ledger.positions[k]!;
    const last = positions[positions.length - 1];
    if (!last) throw new Error('an invocation step must append at least one audit record');
    const record: InvocationRecord = { ...s.record, audit: last };
    (s.expectedStatus === undefined ? rows.fresh : rows.updated).push(invocationRow(record));
    const receipt = s.seal?.(last);
    if (receipt !== undefined)
      rows.receipts.push({
        invocation_id: record.id,
        tenant: record.tenant,
        envelope: JSON.stringify(receipt),
      });
    return last;
  });
  // Any unique violation skips its row: a key (or id) already stored goes one by one.
  if ((await insertSaveRows(tx, ledger, rows)) !== rows.fresh.length)
    throw new Error('a new call is stored already');
  live.forEach(({ s, i }, k) => {
    s.record.audit = lasts[k]!;
    settled[i] = { ok: true, value: lasts[k]! };
  });
  return settled as Settled<AuditPosition>[];
}

/** Writes one invocation step in `tx`, its own statements in turn. */
export async function saveStep(tx: Transaction, step: InvocationStep): Promise<AuditPosition> {
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
}

/** True when `err` is PostgreSQL's unique violation (SQLSTATE 23505) of `constraint`. */
function isUniqueViolation(err: unknown, constraint: string): boolean {
  const e = err as { code?: unknown; constraint?: unknown };
  return e.code === '23505' && e.constraint === constraint;
}
