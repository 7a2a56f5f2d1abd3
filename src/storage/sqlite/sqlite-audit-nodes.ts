import { sql } from 'kysely';
import { GatehouseError } from '../../core/index.js';
import { appendSiblings, completedSubtrees } from '../../audit/index.js';
import type { SubtreeHash, SubtreeRef } from '../../audit/index.js';
import type { SqliteDatabase } from './sqlite-database.js';

/**
 * The stored hashes of `refs`, in their order (null where none), in at most two statements
 * whatever their number: the refs go in as one JSON array and SQLite looks each up by primary key
 * (json_each CROSS JOIN keeps the array the outer loop, so it never scans the log).
 */
export function readSubtreeHashes(
  db: SqliteDatabase,
  tenant: string,
  refs: readonly SubtreeRef[],
): (Buffer | null)[] {
  const k = db.kysely;
  const out: (Buffer | null)[] = refs.map(() => null);
  const leaves: [number, number][] = [];
  const nodes: [number, number, number][] = [];
  refs.forEach((r, at) => {
    if (r.level === 0) leaves.push([at, r.index]);
    else nodes.push([at, r.level, r.index]);
  });
  if (nodes.length > 0) {
    const rows = db.allPrepared(
      'audit-node-hashes',
      (p) =>
        k
          .selectFrom(sql<{ value: string }>`json_each(${p('refs')})`.as('j'))
          .crossJoin('audit_nodes as n')
          .select([sql<number>`j.value ->> 0`.as('at'), 'n.hash'])
          .where('n.tenant', '=', p('tenant'))
          .where('n.level', '=', sql<number>`j.value ->> 1`)
          .where('n.idx', '=', sql<number>`j.value ->> 2`),
      { tenant, refs: JSON.stringify(nodes) },
    );
    for (const row of rows) out[row.at] = row.hash;
  }
  if (leaves.length > 0) {
    const rows = db.allPrepared(
      'audit-leaf-hashes',
      (p) =>
        k
          .selectFrom(sql<{ value: string }>`json_each(${p('refs')})`.as('j'))
          .crossJoin('audit_records as r')
          .select([sql<number>`j.value ->> 0`.as('at'), 'r.leaf_hash'])
          .where('r.tenant', '=', p('tenant'))
          .where('r.idx', '=', sql<number>`j.value ->> 1`),
      { tenant, refs: JSON.stringify(leaves) },
    );
    for (const row of rows) out[row.at] = Buffer.from(row.leaf_hash, 'base64');
  }
  return out;
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
  const refs = appendSiblings(index);
  const siblings = readSubtreeHashes(db, tenant, refs).map((hash, at) => {
    if (hash === null) {
      const ref = refs[at]!;
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
function insertSubtreeHashes(
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
