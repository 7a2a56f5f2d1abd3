import { ErrorCode, GatehouseError, IllegalStateError } from '../core/index.js';
import { emptyRoot, nodeHash } from './merkle-hash.js';
import { rangeSubtrees } from './merkle-subtree.js';
import type { SubtreeRef } from './merkle-subtree.js';

/**
 * Reads the stored hashes of complete perfect subtrees of one log, in the order asked (level 0 is
 * a leaf hash). May be asked for the same subtree twice.
 */
export type SubtreeSource = (refs: readonly SubtreeRef[]) => Promise<readonly Buffer[]>;

/** Leaves `lo` ≤ i < `hi`. */
type Range = readonly [lo: number, hi: number];

/**
 * RFC 6962 Merkle Tree Hash of the first `size` leaves, from at most log2(size) stored subtrees.
 * @throws GatehouseError `INVALID_INPUT` when `size` is negative or not an integer.
 */
export async function treeRoot(source: SubtreeSource, size: number): Promise<Buffer> {
  checkCount(size, 'tree size');
  if (size === 0) return emptyRoot();
  const [root] = await resolve(source, [[0, size]]);
  return root as Buffer;
}

/**
 * RFC 6962 §2.1.1 audit path of leaf `index` in the tree of `size` leaves, deepest first, with
 * that tree's root. Reads O(log size) stored subtrees (one batch) and hashes O(log size) times.
 * @throws GatehouseError `INVALID_INPUT` unless `0 <= index < size`.
 */
export async function proveInclusion(
  source: SubtreeSource,
  index: number,
  size: number,
): Promise<{ rootHash: Buffer; proof: Buffer[] }> {
  checkCount(size, 'tree size');
  checkCount(index, 'leaf index');
  if (index >= size) {
    throw new GatehouseError(
      'INVALID_INPUT',
      `leaf index ${index} is not below tree size ${size}`,
      {
        details: { index, size },
      },
    );
  }
  const ranges: Range[] = [];
  let lo = 0;
  let hi = size;
  while (hi - lo > 1) {
    const k = splitPoint(hi - lo);
    if (index < lo + k) {
      ranges.push([lo + k, hi]);
      hi = lo + k;
    } else {
      ranges.push([lo, lo + k]);
      lo += k;
    }
  }
  ranges.reverse();
  const hashes = await resolve(source, [...ranges, [0, size]]);
  const rootHash = hashes.pop() as Buffer;
  return { rootHash, proof: hashes };
}

/**
 * RFC 6962 §2.1.2 consistency proof PROOF(from, D[0:to]) with both roots. Empty when the sizes
 * are equal. Reads O(log to) stored subtrees (one batch) and hashes O(log to) times.
 * @throws GatehouseError `INVALID_INPUT` unless `1 <= from <= to`.
 */
export async function proveConsistency(
  source: SubtreeSource,
  from: number,
  to: number,
): Promise<{ fromRoot: Buffer; toRoot: Buffer; proof: Buffer[] }> {
  checkCount(from, 'from size');
  checkCount(to, 'to size');
  if (from < 1 || from > to) {
    throw new GatehouseError(
      'INVALID_INPUT',
      `a consistency proof needs 1 <= fromSize <= toSize; got fromSize ${from}, toSize ${to}`,
      { details: { fromSize: from, toSize: to } },
    );
  }
  // SUBPROOF(m, D[lo:hi], complete), unrolled: the outermost sibling is pushed first.
  const ranges: Range[] = [];
  let lo = 0;
  let hi = to;
  let complete = true;
  for (;;) {
    if (from - lo === hi - lo) {
      if (!complete) ranges.push([lo, hi]);
      break;
    }
    const k = splitPoint(hi - lo);
    if (from - lo <= k) {
      ranges.push([lo + k, hi]);
      hi = lo + k;
    } else {
      ranges.push([lo, lo + k]);
      lo += k;
      complete = false;
    }
  }
  ranges.reverse();
  const hashes = await resolve(source, [...ranges, [0, from], [0, to]]);
  const toRoot = hashes.pop() as Buffer;
  const fromRoot = hashes.pop() as Buffer;
  return { fromRoot, toRoot, proof: hashes };
}

/**
 * MTH of each range, from one batch read of the subtrees they split into. A range that is not
 * one subtree is `H(first subtree, rest)`; the rests of the ranges of one proof are suffixes of
 * the same right edge, so they are memoised and each is hashed once.
 */
async function resolve(source: SubtreeSource, ranges: readonly Range[]): Promise<Buffer[]> {
  const pieces = ranges.map(([lo, hi]) => rangeSubtrees(lo, hi));
  const wanted = new Map<string, SubtreeRef>();
  for (const ref of pieces.flat()) wanted.set(key(ref), ref);
  const refs = [...wanted.values()];
  const read = await source(refs);
  if (read.length !== refs.length) {
    throw new IllegalStateError(`asked for ${refs.length} subtree hashes, got ${read.length}`);
  }
  const stored = new Map(refs.map((ref, i) => [key(ref), read[i] as Buffer]));
  const memo = new Map<string, Buffer>();
  const hashOf = (lo: number, hi: number, subtrees: readonly SubtreeRef[], at: number): Buffer => {
    const memoKey = `${lo}:${hi}`;
    const known = memo.get(memoKey);
    if (known) return known;
    const first = subtrees[at] as SubtreeRef;
    const head = stored.get(key(first)) as Buffer;
    const width = 2 ** first.level;
    const hash =
      at === subtrees.length - 1 ? head : nodeHash(head, hashOf(lo + width, hi, subtrees, at + 1));
    memo.set(memoKey, hash);
    return hash;
  };
  return ranges.map(([lo, hi], i) => hashOf(lo, hi, pieces[i] as SubtreeRef[], 0));
}

function key(ref: SubtreeRef): string {
  return `${ref.level}/${ref.index}`;
}

/** The largest power of two strictly below `n` (n >= 2). */
function splitPoint(n: number): number {
  let k = 1;
  while (k * 2 < n) k *= 2;
  return k;
}

/**
 * Refuses a tree size or leaf index that is not a non-negative safe integer.
 * @throws GatehouseError INVALID_INPUT naming `parameter` in its message and details.
 */
export function checkCount(n: number, parameter: string): void {
  if (!Number.isSafeInteger(n) || n < 0) {
    throw new GatehouseError(
      ErrorCode.INVALID_INPUT,
      `${parameter} must be a non-negative integer; got ${n}.`,
      { details: { parameter } },
    );
  }
}
