import { sql } from 'kysely';
import { GatehouseError } from '../../core/index.js';
import { appendSiblings, completedSubtrees } from '../../audit/index.js';
import type { SubtreeRef } from '../../audit/index.js';
import type { Transaction } from './group-commit.js';

/**
 * The stored hashes of `refs`, in their order (null where none), in at most two statements
 * whatever their number: the refs go in as arrays that PostgreSQL unnests and looks up by key.
 */
export async function readSubtreeHashes(
  db: Transaction,
  tenant: string,
  refs: readonly SubtreeRef[],
): Promise<(Buffer | null)[]> {
  const out: (Buffer | null)[] = refs.map(() => null);
  const at = new Map<string, number[]>();
  const levels: number[] = [];
  const nodeIdx: number[] = [];
  const leafIdx: number[] = [];
  refs.forEach((r, i) => {
    const key = `${r.level}/${r.index}`;
    if (!at.has(key)) {
      at.set(key, []);
      if (r.level === 0) leafIdx.push(r.index);
      else {
        levels.push(r.level);
        nodeIdx.push(r.index);
      }
    }
    at.get(key)!.push(i);
  });
  const put = (level: number, index: number, hash: Buffer): void => {
    for (const i of at.get(`${level}/${index}`) ?? []) out[i] = hash;
  };
  if (levels.length > 0) {
    const rows = await db
      .selectFrom('audit_nodes')
      .select(['level', 'idx', 'hash'])
      .where('tenant', '=', tenant)
      .where(
        sql<boolean>`(level, idx) in (select * from unnest(${levels}::int[], ${nodeIdx}::bigint[]))`,
      )
      .execute();
    for (const r of rows) put(r.level, Number(r.idx), r.hash);
  }
  if (leafIdx.length > 0) {
    const rows = await db
      .selectFrom('audit_records')
      .select(['idx', 'leaf_hash'])
      .where('tenant', '=', tenant)
      .where(sql<boolean>`idx = any(${leafIdx}::bigint[])`)
      .execute();
    for (const r of rows) put(0, Number(r.idx), Buffer.from(r.leaf_hash, 'base64'));
  }
  return out;
}

/**
 * Stores the subtrees that appending leaf `index` (hash `leaf`) completes, reading its stored
 * siblings, in the transaction that appends the record.
 * @throws GatehouseError INTERNAL when a sibling is missing: the append fails rather than leave a
 *   tree that cannot be proven.
 */
export async function storeCompletedSubtrees(
  tx: Transaction,
  tenant: string,
  index: number,
  leaf: Buffer,
): Promise<void> {
  const refs = appendSiblings(index);
  const siblings = (await readSubtreeHashes(tx, tenant, refs)).map((hash, at) => {
    if (hash === null) {
      const ref = refs[at]!;
      throw new GatehouseError(
        'INTERNAL',
        `audit log of ${tenant}: subtree ${ref.level}/${ref.index} is missing, so record ${index} cannot be appended`,
      );
    }
    return hash;
  });
  const nodes = completedSubtrees(index, leaf, siblings);
  if (nodes.length === 0) return;
  await tx
    .insertInto('audit_nodes')
    .values(nodes.map((n) => ({ tenant, level: n.level, idx: n.index, hash: n.hash })))
    .execute();
}
