import { sql } from 'kysely';
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
