import { sql } from 'kysely';
import { GatehouseError } from '../../core/index.js';
import type { AuditPosition, AuditRecordDraft, LedgerEntries } from '../../core/index.js';
import { appendSiblings, completedSubtrees } from '../../audit/index.js';
import type { SubtreeHash, SubtreeRef } from '../../audit/index.js';
import type { Tables } from '../schema/tables.js';
import { auditRow, outboxRow } from '../sql/audit-rows.js';
import { OUTBOX_CHANNEL } from './outbox-listener.js';
import { readSubtreeHashes } from './postgres-audit-nodes.js';
import type { PostgresDatabase } from './postgres-database.js';
import type { Transaction } from './group-commit.js';

/** Rows per multi-row insert (PostgreSQL takes at most 65,535 parameters in one statement). */
const ROWS_PER_INSERT = 1_000;

/**
 * Appends audit records and outbox events in `tx`, the transaction of the state change that caused
 * them. See {@link appendLedgers}.
 * @returns the position of each audit record, in order.
 */
export async function appendLedger(
  tx: Transaction,
  entries: LedgerEntries,
): Promise<AuditPosition[]> {
  return (await appendLedgers(tx, [entries]))[0]!;
}

/**
 * Appends the audit records and outbox events of several writes in `tx`, in their order, in a
 * handful of statements whatever their number (a round trip each: a batch of a hundred calls costs
 * as many as one). See {@link prepareLedgers}.
 * @returns the positions of each entry's audit records, in order.
 */
export async function appendLedgers(
  tx: Transaction,
  list: readonly LedgerEntries[],
): Promise<AuditPosition[][]> {
  const prepared = await prepareLedgers(tx, list);
  await insertLedgerRows(tx, prepared);
  return prepared.positions;
}

/** The rows of an append (see {@link prepareLedgers}), still to be inserted. */
export interface LedgerRows {
  /** The positions of each entry's audit records, in order. */
  positions: AuditPosition[][];
  audit: Tables['audit_records'][];
  nodes: Tables['audit_nodes'][];
  outbox: Omit<Tables['outbox'], 'seq'>[];
}

/**
 * Reserves the indices of the audit records of `list` and computes every row of their append,
 * inserting nothing: the caller inserts them ({@link insertLedgerRows}, or in a statement of its
 * own with its other rows) before it commits. Each tenant's indices are reserved by advancing its
 * tree head (`audit_heads`) with one upsert, which holds the heads' row locks until commit: appends
 * from any node extend one tree, in turn. Heads are taken in tenant order, so two transactions
 * never wait on each other in a cycle. The subtrees the appends complete are computed here from
 * the siblings stored before (one read) and those completed by earlier records of the same call.
 */
export async function prepareLedgers(
  tx: Transaction,
  list: readonly LedgerEntries[],
): Promise<LedgerRows> {
  const drafts = list.flatMap((e) => e.audit);
  const next = await advanceHeads(tx, drafts);
  const first = new Map(next);
  const audit: Tables['audit_records'][] = [];
  const leaves: { tenant: string; index: number; leaf: Buffer }[] = [];
  const positions = list.map((entries) =>
    entries.audit.map((draft): AuditPosition => {
      const index = next.get(draft.tenant)!;
      next.set(draft.tenant, index + 1);
      const { row, leaf } = auditRow(draft, index);
      audit.push(row);
      leaves.push({ tenant: draft.tenant, index, leaf });
      return { index, treeSize: index + 1 };
    }),
  );
  const nodes = await completedNodes(tx, leaves, first);
  const outbox = list.flatMap((e) => e.events).map(outboxRow);
  return { positions, audit, nodes, outbox };
}

/** Inserts the rows of `rows` in `tx`, a multi-row statement per table (and per thousand rows). */
export async function insertLedgerRows(tx: Transaction, rows: LedgerRows): Promise<void> {
  for (let i = 0; i < rows.audit.length; i += ROWS_PER_INSERT) {
    await tx
      .insertInto('audit_records')
      .values(rows.audit.slice(i, i + ROWS_PER_INSERT))
      .execute();
  }
  for (let i = 0; i < rows.nodes.length; i += ROWS_PER_INSERT) {
    await tx
      .insertInto('audit_nodes')
      .values(rows.nodes.slice(i, i + ROWS_PER_INSERT))
      .execute();
  }
  if (rows.outbox.length > 0) {
    for (let i = 0; i < rows.outbox.length; i += ROWS_PER_INSERT) {
      await tx
        .insertInto('outbox')
        .values(rows.outbox.slice(i, i + ROWS_PER_INSERT))
        .execute();
    }
    // Delivered at commit (once per transaction): other nodes' event streams read the outbox.
    await notifyOutbox(tx);
  }
}

/** Wakes the other nodes' event streams at commit (once per transaction, however many calls). */
export async function notifyOutbox(tx: Transaction): Promise<void> {
  await sql`select pg_notify(${OUTBOX_CHANNEL}, '')`.execute(tx);
}

/** Advances the tree head of each tenant of `drafts` by its count; returns each one's first index. */
async function advanceHeads(
  tx: Transaction,
  drafts: readonly AuditRecordDraft[],
): Promise<Map<string, number>> {
  const counts = new Map<string, number>();
  for (const d of drafts) counts.set(d.tenant, (counts.get(d.tenant) ?? 0) + 1);
  const next = new Map<string, number>();
  if (counts.size === 0) return next;
  const tenants = [...counts.keys()].sort();
  const sizes = tenants.map((t) => counts.get(t)!);
  const { rows } = await sql<{ tenant: string; size: number }>`
    insert into audit_heads (tenant, size)
    select t, n from unnest(${tenants}::text[], ${sizes}::bigint[]) as u(t, n) order by t
    on conflict (tenant) do update set size = audit_heads.size + excluded.size
    returning tenant, size`.execute(tx);
  for (const r of rows) next.set(r.tenant, Number(r.size) - counts.get(r.tenant)!);
  return next;
}

/**
 * The subtrees appending `leaves` (in order, each tenant's consecutive from `first`) completes.
 * A sibling that ends before a tenant's first new leaf is stored (read in one go per tenant); any
 * other was completed by an earlier leaf of this append.
 * @throws GatehouseError INTERNAL when a stored sibling is missing: the append fails rather than
 *   leave a tree that cannot be proven.
 */
async function completedNodes(
  tx: Transaction,
  leaves: readonly { tenant: string; index: number; leaf: Buffer }[],
  first: ReadonlyMap<string, number>,
): Promise<Tables['audit_nodes'][]> {
  const key = (tenant: string, r: SubtreeRef) => `${tenant}\u0000${r.level}/${r.index}`;
  const stored = new Map<string, SubtreeRef[]>();
  for (const { tenant, index } of leaves) {
    for (const r of appendSiblings(index)) {
      if ((r.index + 1) * 2 ** r.level <= first.get(tenant)!) {
        const refs = stored.get(tenant) ?? [];
        refs.push(r);
        stored.set(tenant, refs);
      }
    }
  }
  const known = new Map<string, Buffer>();
  for (const [tenant, refs] of stored) {
    const hashes = await readSubtreeHashes(tx, tenant, refs);
    hashes.forEach((h, i) => {
      if (h !== null) known.set(key(tenant, refs[i]!), h);
    });
  }
  const out: Tables['audit_nodes'][] = [];
  for (const { tenant, index, leaf } of leaves) {
    known.set(key(tenant, { level: 0, index }), leaf);
    const siblings = appendSiblings(index).map((r) => {
      const hash = known.get(key(tenant, r));
      if (hash === undefined) {
        throw new GatehouseError(
          'INTERNAL',
          `audit log of ${tenant}: subtree ${r.level}/${r.index} is missing, so record ${index} cannot be appended`,
        );
      }
      return hash;
    });
    const nodes: SubtreeHash[] = completedSubtrees(index, leaf, siblings);
    for (const n of nodes) {
      known.set(key(tenant, n), n.hash);
      out.push({ tenant, level: n.level, idx: n.index, hash: n.hash });
    }
  }
  return out;
}

/** Appends audit records on their own, in a write of their own (nothing for an empty list). */
export async function appendAuditRecords(
  db: PostgresDatabase,
  records: AuditRecordDraft[],
): Promise<void> {
  if (records.length === 0) return;
  await db.write((tx) => appendLedger(tx, { audit: records, events: [] }));
}
