import { GatehouseError } from '../../core/index.js';
import { appendSiblings, completedSubtrees } from '../../audit/index.js';
import type { SubtreeHash, SubtreeRef } from '../../audit/index.js';
import type { SqliteDatabase } from './sqlite-database.js';

/**
 * The stored hash of one complete perfect subtree of a tenant's log, or null: level 0 is the leaf
 * hash written with the record, higher levels rows of `audit_nodes`. One indexed point read.
 */
export function readSubtreeHash(
  db: SqliteDatabase,
  tenant: string,
  ref: SubtreeRef,
): Buffer | null {
  const k = db.kysely;
  if (ref.level === 0) {
    const row = db.firstPrepared(
      'audit-leaf-hash',
      (p) =>
        k
          .selectFrom('audit_records')
          .select('leaf_hash')
          .where('tenant', '=', p('tenant'))
          .where('idx', '=', p('idx')),
      { tenant, idx: ref.index },
    );
    return row ? Buffer.from(row.leaf_hash, 'base64') : null;
  }
  const row = db.firstPrepared(
    'audit-node-hash',
    (p) =>
      k
        .selectFrom('audit_nodes')
        .select('hash')
        .where('tenant', '=', p('tenant'))
        .where('level', '=', p('level'))
        .where('idx', '=', p('idx')),
    { tenant, level: ref.level, idx: ref.index },
  );
  return row ? row.hash : null;
}

// Above this many subtrees of one level, dense enough, one range read beats point reads.
const RANGE_READ_MIN = 64;

/**
 * The stored hashes of `refs`, in their order (null where none): point reads, except that many
 * subtrees of one level close together (what `audit verify` asks per chunk) are read as one range.
 */
export function readSubtreeHashes(
  db: SqliteDatabase,
  tenant: string,
  refs: readonly SubtreeRef[],
): (Buffer | null)[] {
  const byLevel = new Map<number, number[]>();
  for (const r of refs) {
    const indexes = byLevel.get(r.level) ?? [];
    indexes.push(r.index);
    byLevel.set(r.level, indexes);
  }
  const found = new Map<string, Buffer>();
  for (const [level, indexes] of byLevel) {
    const lo = indexes.reduce((a, b) => Math.min(a, b));
    const hi = indexes.reduce((a, b) => Math.max(a, b));
    if (level === 0 || indexes.length < RANGE_READ_MIN || hi - lo >= 4 * indexes.length) continue;
    const rows = db.all(
      db.kysely
        .selectFrom('audit_nodes')
        .select(['idx', 'hash'])
        .where('tenant', '=', tenant)
        .where('level', '=', level)
        .where('idx', '>=', lo)
        .where('idx', '<=', hi),
    );
    for (const row of rows) found.set(`${level}/${Number(row.idx)}`, row.hash);
    byLevel.delete(level);
  }
  return refs.map((r) =>
    byLevel.has(r.level)
      ? readSubtreeHash(db, tenant, r)
      : (found.get(`${r.level}/${r.index}`) ?? null),
  );
}

/**
 * Stores the subtrees that appending leaf `index` (hash `leaf`) completes, reading its stored
 * siblings. Must run inside the {@link SqliteDatabase.write} that appends the record.
 * @throws GatehouseError INTERNAL when a sibling is missing (a log whose subtrees were never
 *   stored): the append fails rather than leave a tree that cannot be proven.
 */
export function storeCompletedSubtrees(
  db: SqliteDatabase,
  tenant: string,
  index: number,
  leaf: Buffer,
): void {
  const siblings = appendSiblings(index).map((ref) => {
    const hash = readSubtreeHash(db, tenant, ref);
    if (hash === null) {
      throw new GatehouseError(
        'INTERNAL',
        `audit log of ${tenant}: subtree ${ref.level}/${ref.index} is missing, so record ${index} cannot be appended`,
      );
    }
    return hash;
  });
  insertSubtreeHashes(db, tenant, completedSubtrees(index, leaf, siblings));
}

/** Inserts subtree hashes of level ≥ 1; inside a {@link SqliteDatabase.write}. */
export function insertSubtreeHashes(
  db: SqliteDatabase,
  tenant: string,
  nodes: readonly SubtreeHash[],
): void {
  for (const node of nodes) {
    db.runPrepared(
      'audit-node-insert',
      (p) =>
        db.kysely.insertInto('audit_nodes').values({
          tenant: p('tenant'),
          level: p('level'),
          idx: p('idx'),
          hash: p('hash'),
        }),
      { tenant, level: node.level, idx: node.index, hash: node.hash },
    );
  }
}
