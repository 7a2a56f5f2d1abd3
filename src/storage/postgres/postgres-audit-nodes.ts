import { sql } from 'kysely';
import type { SubtreeRef } from '../../audit/index.js';
import type { Transaction } from './group-commit.js';

/**
 * The stored hashes of `refs`, in their order (null where none), in one statement whatever
 * their number: the refs go in as arrays that PostgreSQL unnests and looks up by key.
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
  if (levels.length === 0 && leafIdx.length === 0) return out;
  // One round trip for both kinds: an append reads these while it holds its tenant's tree head.
  const { rows } = await sql<{ level: number; idx: number; hash: Buffer }>`
    select level, idx, hash from audit_nodes
      where tenant = ${tenant}
        and (level, idx) in (select * from unnest(${levels}::int[], ${nodeIdx}::bigint[]))
    union all
    select 0, idx, decode(leaf_hash, 'base64') from audit_records
      where tenant = ${tenant} and idx = any(${leafIdx}::bigint[])`.execute(db);
  for (const r of rows) put(Number(r.level), Number(r.idx), r.hash);
  return out;
}
