import { sql } from 'kysely';
import { GatehouseError } from '../../core/index.js';
import type { AuditPosition, AuditRecordDraft, LedgerEntries } from '../../core/index.js';
import { appendSiblings, completedSubtrees } from '../../audit/index.js';
import type { SubtreeHash } from '../../audit/index.js';
import type { Tables } from '../schema/tables.js';
import { auditRow, outboxRow } from '../sql/audit-rows.js';
import { OUTBOX_CHANNEL } from './outbox-listener.js';
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
 * the tree's frontier before them (read by the same statement) and those completed by earlier
 * records of the same call.
 */
export async function prepareLedgers(
  tx: Transaction,
  list: readonly LedgerEntries[],
): Promise<LedgerRows> {
  const drafts = list.flatMap((e) => e.audit);
  const { next, frontier } = await advanceHeads(tx, drafts);
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
  const nodes = completedNodes(leaves, frontier);
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

/** A subtree's key in the maps of an append: its tenant, level and index. */
const nodeKey = (tenant: string, level: number, index: number) =>
  `${tenant}\u0000${level}/${index}`;

/**
 * Advances the tree head of each tenant of `drafts` by its count; returns each one's first index,
 * and the hashes of the tree's frontier before the append (one perfect subtree per set bit of its
 * size, by {@link nodeKey}): every stored sibling an append needs is one of these.
 *
 * One statement, whose snapshot is taken when it starts: it sees every append committed before
 * only because the batch holds the write lock already, so no head it advances is held by another
 * transaction (one it waited for would have committed frontier rows this snapshot misses; a
 * missing row fails the append in {@link completedNodes}, never a wrong hash, as stored subtrees
 * never change).
 */
async function advanceHeads(
  tx: Transaction,
  drafts: readonly AuditRecordDraft[],
): Promise<{ next: Map<string, number>; frontier: Map<string, Buffer> }> {
  const counts = new Map<string, number>();
  for (const d of drafts) counts.set(d.tenant, (counts.get(d.tenant) ?? 0) + 1);
  const next = new Map<string, number>();
  const frontier = new Map<string, Buffer>();
  if (counts.size === 0) return { next, frontier };
  const tenants = [...counts.keys()].sort();
  const sizes = tenants.map((t) => counts.get(t)!);
  const { rows } = await sql<{
    tenant: string;
    size: number | null;
    level: number | null;
    idx: number | null;
    hash: Buffer | null;
  }>`
    with h as (
      insert into audit_heads (tenant, size)
      select t, n from unnest(${tenants}::text[], ${sizes}::bigint[]) as u(t, n) order by t
      on conflict (tenant) do update set size = audit_heads.size + excluded.size
      returning tenant, size
    ), f as (
      select h.tenant, l.level, ((h.size - u.n) >> l.level) - 1 as idx
      from h
      join unnest(${tenants}::text[], ${sizes}::bigint[]) as u(t, n) on u.t = h.tenant
      cross join generate_series(0, 62) as l(level)
      where ((h.size - u.n) >> l.level) & 1 = 1
    )
    select tenant, size, null::int as level, null::bigint as idx, null::bytea as hash from h
    union all
    select f.tenant, null, f.level, f.idx, n.hash from f
      join audit_nodes n on n.tenant = f.tenant and n.level = f.level and n.idx = f.idx
    union all
    select f.tenant, null, 0, f.idx, decode(r.leaf_hash, 'base64') from f
      join audit_records r on r.tenant = f.tenant and r.idx = f.idx
      where f.level = 0`.execute(tx);
  for (const r of rows) {
    if (r.size !== null) next.set(r.tenant, Number(r.size) - counts.get(r.tenant)!);
    else frontier.set(nodeKey(r.tenant, Number(r.level), Number(r.idx)), r.hash!);
  }
  return { next, frontier };
}

/**
 * The subtrees appending `leaves` (in order, each tenant's consecutive from its first new index)
 * completes. A sibling that ends before a tenant's first new leaf is in its `frontier`; any
 * other was completed by an earlier leaf of this append.
 * @throws GatehouseError INTERNAL when a stored sibling is missing: the append fails rather than
 *   leave a tree that cannot be proven.
 */
function completedNodes(
  leaves: readonly { tenant: string; index: number; leaf: Buffer }[],
  frontier: ReadonlyMap<string, Buffer>,
): Tables['audit_nodes'][] {
  const known = new Map(frontier);
  const out: Tables['audit_nodes'][] = [];
  for (const { tenant, index, leaf } of leaves) {
    known.set(nodeKey(tenant, 0, index), leaf);
    const siblings = appendSiblings(index).map((r) => {
      const hash = known.get(nodeKey(tenant, r.level, r.index));
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
      known.set(nodeKey(tenant, n.level, n.index), n.hash);
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
