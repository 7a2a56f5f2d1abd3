import type { Kysely } from 'kysely';
import { MerkleFrontier, rangeSubtrees } from '../../audit/index.js';
import type { SubtreeHash } from '../../audit/index.js';

/** The two tables as migration 0004 knows them (later migrations may change `Tables`). */
interface NodeTables {
  audit_records: { tenant: string; idx: number; leaf_hash: string };
  audit_nodes: { tenant: string; level: number; idx: number; hash: Buffer };
}

/** Options of {@link backfillAuditNodes}. */
export interface BackfillOptions {
  /** Leaves read (and their subtrees written) per transaction; even. */
  batch?: number;
  /** Called after each committed batch (tests stop a backfill half-way through it). */
  onBatch?: (tenant: string, leaves: number) => void;
}

const DEFAULT_BATCH = 16_384;
// Rows per INSERT statement: 4 parameters each, well under SQLite's 32,766.
const INSERT_ROWS = 2_000;

/**
 * Stores the subtree hashes of every log written before appends kept them (migration 0004), in
 * batches of `batch` leaves with bounded memory, each batch in a transaction of its own (or in the
 * migration's, where the dialect runs migrations in one). Resumable: a backfill stopped half-way
 * (a crash) restarts after the last batch it committed, since each batch stores exactly the
 * subtrees its leaves complete. Level 0 is the `leaf_hash` written with each record.
 */
export async function backfillAuditNodes(
  kysely: Kysely<unknown>,
  o: BackfillOptions = {},
): Promise<void> {
  const db = kysely as unknown as Kysely<NodeTables>;
  const batch = o.batch ?? DEFAULT_BATCH;
  if (!Number.isSafeInteger(batch) || batch < 2 || batch % 2 !== 0) {
    throw new RangeError(`backfill batch must be an even number ≥ 2, got ${batch}`);
  }
  const tenants = await db
    .selectFrom('audit_records')
    .select('tenant')
    .distinct()
    .orderBy('tenant')
    .execute();
  for (const { tenant } of tenants) {
    const top = await db
      .selectFrom('audit_records')
      .select((eb) => eb.fn.max('idx').as('top'))
      .where('tenant', '=', tenant)
      .executeTakeFirst();
    const size = Number(top?.top ?? -1) + 1;
    let done = await resumePoint(db, tenant);
    const frontier = await restoreFrontier(db, tenant, done);
    while (done < size) {
      const to = Math.min(size, done + batch);
      const rows = await db
        .selectFrom('audit_records')
        .select(['idx', 'leaf_hash'])
        .where('tenant', '=', tenant)
        .where('idx', '>=', done)
        .where('idx', '<', to)
        .orderBy('idx')
        .execute();
      const nodes: SubtreeHash[] = [];
      for (const [i, row] of rows.entries()) {
        if (Number(row.idx) !== done + i) {
          throw new Error(`audit log of ${tenant} has no record ${done + i}: cannot backfill`);
        }
        nodes.push(...frontier.append(Buffer.from(row.leaf_hash, 'base64')));
      }
      await inTransaction(db, async (tx) => {
        for (let i = 0; i < nodes.length; i += INSERT_ROWS) {
          await tx
            .insertInto('audit_nodes')
            .values(
              nodes
                .slice(i, i + INSERT_ROWS)
                .map((n) => ({ tenant, level: n.level, idx: n.index, hash: n.hash })),
            )
            .execute();
        }
      });
      done = to;
      o.onBatch?.(tenant, done);
    }
  }
}

/**
 * How many leaves of the tenant's log already have their subtrees stored: batches are even and
 * commit whole, so the level-1 subtrees stored say it.
 */
async function resumePoint(db: Kysely<NodeTables>, tenant: string): Promise<number> {
  const row = await db
    .selectFrom('audit_nodes')
    .select((eb) => eb.fn.max('idx').as('top'))
    .where('tenant', '=', tenant)
    .where('level', '=', 1)
    .executeTakeFirst();
  return row?.top === null || row?.top === undefined ? 0 : 2 * (Number(row.top) + 1);
}

/** The frontier of the first `size` leaves (`size` even), from the stored subtrees. */
async function restoreFrontier(
  db: Kysely<NodeTables>,
  tenant: string,
  size: number,
): Promise<MerkleFrontier> {
  if (size === 0) return new MerkleFrontier();
  const hashes: Buffer[] = [];
  for (const ref of rangeSubtrees(0, size)) {
    const row = await db
      .selectFrom('audit_nodes')
      .select('hash')
      .where('tenant', '=', tenant)
      .where('level', '=', ref.level)
      .where('idx', '=', ref.index)
      .executeTakeFirst();
    if (!row) throw new Error(`audit log of ${tenant}: subtree ${ref.level}/${ref.index} missing`);
    hashes.push(Buffer.from(row.hash));
  }
  return MerkleFrontier.restore(size, hashes);
}

/** Runs `fn` in a transaction of its own, or in the enclosing one when there is one. */
async function inTransaction(
  db: Kysely<NodeTables>,
  fn: (tx: Kysely<NodeTables>) => Promise<void>,
): Promise<void> {
  if (db.isTransaction) return fn(db);
  await db.transaction().execute(fn);
}
