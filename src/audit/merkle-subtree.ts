import { IllegalStateError } from '../core/index.js';
import { nodeHash } from './merkle-hash.js';

/**
 * A perfect subtree of an RFC 6962 log: the 2^`level` leaves from leaf `index`·2^`level` on.
 * Level 0 is a single leaf. Once the log holds its last leaf, its hash never changes, so it can
 * be stored as it completes and read for any later tree size.
 */
export interface SubtreeRef {
  readonly level: number;
  readonly index: number;
}

/** A perfect subtree and its Merkle hash. */
export interface SubtreeHash extends SubtreeRef {
  readonly hash: Buffer;
}

/**
 * The subtrees whose hashes appending leaf `index` needs: the left sibling at each level the new
 * leaf completes a subtree of (one per trailing 1 bit of `index`), deepest first. Empty for an
 * even index. Each is complete before the leaf is appended.
 */
export function appendSiblings(index: number): SubtreeRef[] {
  const refs: SubtreeRef[] = [];
  // Sizes may exceed 2^31, so no bitwise operators.
  for (let level = 0, n = index; n % 2 === 1; level++, n = Math.floor(n / 2)) {
    refs.push({ level, index: n - 1 });
  }
  return refs;
}

/**
 * The subtrees of level ≥ 1 that appending leaf `index` with hash `leaf` completes, lowest first,
 * given the hashes of its {@link appendSiblings} in their order. These are the hashes a store
 * keeps, in the transaction that appends the leaf.
 * @throws IllegalStateError when `siblings` does not match {@link appendSiblings}.
 */
export function completedSubtrees(
  index: number,
  leaf: Uint8Array,
  siblings: readonly Uint8Array[],
): SubtreeHash[] {
  const expected = appendSiblings(index).length;
  if (siblings.length !== expected) {
    throw new IllegalStateError(
      `appending leaf ${index} needs ${expected} sibling hashes, got ${siblings.length}`,
    );
  }
  const out: SubtreeHash[] = [];
  let hash: Buffer = Buffer.from(leaf);
  let n = index;
  for (const [i, sibling] of siblings.entries()) {
    hash = nodeHash(sibling, hash);
    n = Math.floor(n / 2);
    out.push({ level: i + 1, index: n, hash });
  }
  return out;
}

/**
 * The perfect subtrees that make up leaves `lo` ≤ i < `hi`, largest first: one per set bit of
 * `hi - lo`. Their hashes folded from the right (`H(s1, H(s2, … sk))`) give MTH(D[lo:hi]). Each
 * is an aligned subtree of the log (a {@link SubtreeRef}) when `lo` is a multiple of the smallest
 * power of two ≥ `hi - lo`, as every range of an RFC 6962 audit path or consistency proof is;
 * `rangeSubtrees(0, n)` is the compact range of a tree of n leaves.
 * @throws IllegalStateError when the range is empty or negative, or a piece is not aligned.
 */
export function rangeSubtrees(lo: number, hi: number): SubtreeRef[] {
  if (!Number.isSafeInteger(lo) || !Number.isSafeInteger(hi) || lo < 0 || hi <= lo) {
    throw new IllegalStateError(`[${lo}, ${hi}) is not a range of leaves`);
  }
  let level = 0;
  while (2 ** (level + 1) <= hi - lo) level++;
  const refs: SubtreeRef[] = [];
  let start = lo;
  for (; level >= 0; level--) {
    const width = 2 ** level;
    if (hi - start < width) continue;
    if (start % width !== 0) {
      throw new IllegalStateError(`[${lo}, ${hi}) does not split into aligned perfect subtrees`);
    }
    refs.push({ level, index: start / width });
    start += width;
  }
  return refs;
}
