/**
 * The slow reference: RFC 6962 roots and proofs computed from every leaf hash, straight from the
 * RFC's recursive definitions. It was the gateway's implementation before proofs came from stored
 * subtrees; the tests keep it to check those against.
 */
import { GatehouseError } from '../../src/core/index.js';
import { emptyRoot, leafHash, nodeHash } from '../../src/audit/index.js';

/**
 * The leaf hashes of the RFC 6962 reference tests (certificate-transparency, transparency-dev/merkle):
 * the happy-path proofs of test/fixtures/vectors/rfc6962 are proofs in the trees of their first
 * 1..8 leaves.
 */
export const REFERENCE_LEAVES: readonly Buffer[] = [
  '',
  '00',
  '10',
  '2021',
  '3031',
  '40414243',
  '5051525354555657',
  '606162636465666768696a6b6c6d6e6f',
].map((h) => leafHash(Buffer.from(h, 'hex')));

/**
 * RFC 6962 Merkle Tree Hash (MTH) of the first `size` leaf hashes. O(size) hashing.
 * @throws GatehouseError `INVALID_INPUT` when `size` is negative, not an integer, or exceeds the
 *   leaves given.
 */
export function rootHash(leafHashes: readonly Buffer[], size: number = leafHashes.length): Buffer {
  checkSize(leafHashes, size);
  return rangeRoot(leafHashes, 0, size);
}

/**
 * RFC 6962 §2.1.1 audit path PATH(index, D[0:size]): the sibling hashes from the leaf up to the
 * root, deepest first. O(size) hashing (each leaf is hashed into at most one sibling subtree).
 * @throws GatehouseError `INVALID_INPUT` unless `0 <= index < size <= leafHashes.length`.
 */
export function inclusionProof(
  leafHashes: readonly Buffer[],
  index: number,
  size: number,
): Buffer[] {
  checkSize(leafHashes, size);
  if (!Number.isSafeInteger(index) || index < 0 || index >= size) {
    throw new GatehouseError(
      'INVALID_INPUT',
      `leaf index ${index} is not below tree size ${size}`,
      {
        details: { index, size },
      },
    );
  }
  const proof: Buffer[] = [];
  auditPath(leafHashes, index, 0, size, proof);
  return proof;
}

/**
 * RFC 6962 §2.1.2 consistency proof PROOF(fromSize, D[0:toSize]): the hashes that show the tree of
 * `fromSize` leaves is a prefix of the tree of `toSize` leaves. Empty when the sizes are equal.
 * O(toSize) hashing.
 * @throws GatehouseError `INVALID_INPUT` unless `1 <= fromSize <= toSize <= leafHashes.length`
 *   (every tree is trivially consistent with the empty one, so there is nothing to prove).
 */
export function consistencyProof(
  leafHashes: readonly Buffer[],
  fromSize: number,
  toSize: number,
): Buffer[] {
  checkSize(leafHashes, toSize);
  if (!Number.isSafeInteger(fromSize) || fromSize < 1 || fromSize > toSize) {
    throw new GatehouseError(
      'INVALID_INPUT',
      `a consistency proof needs 1 <= fromSize <= toSize; got fromSize ${fromSize}, toSize ${toSize}`,
      { details: { fromSize, toSize } },
    );
  }
  const proof: Buffer[] = [];
  subproof(leafHashes, fromSize, 0, toSize, true, proof);
  return proof;
}

/** PATH(m, D[lo:hi]) with `m` relative to `lo`, appended to `out`. */
function auditPath(
  leaves: readonly Buffer[],
  m: number,
  lo: number,
  hi: number,
  out: Buffer[],
): void {
  const n = hi - lo;
  if (n <= 1) return;
  const k = splitPoint(n);
  if (m < k) {
    auditPath(leaves, m, lo, lo + k, out);
    out.push(rangeRoot(leaves, lo + k, hi));
  } else {
    auditPath(leaves, m - k, lo + k, hi, out);
    out.push(rangeRoot(leaves, lo, lo + k));
  }
}

/** SUBPROOF(m, D[lo:hi], b) with `m` counted from `lo`, appended to `out`. */
function subproof(
  leaves: readonly Buffer[],
  m: number,
  lo: number,
  hi: number,
  complete: boolean,
  out: Buffer[],
): void {
  const n = hi - lo;
  if (m === n) {
    if (!complete) out.push(rangeRoot(leaves, lo, hi));
    return;
  }
  const k = splitPoint(n);
  if (m <= k) {
    subproof(leaves, m, lo, lo + k, complete, out);
    out.push(rangeRoot(leaves, lo + k, hi));
  } else {
    subproof(leaves, m - k, lo + k, hi, false, out);
    out.push(rangeRoot(leaves, lo, lo + k));
  }
}

/** MTH(D[lo:hi]), by the RFC's recursion. */
function rangeRoot(leaves: readonly Buffer[], lo: number, hi: number): Buffer {
  const n = hi - lo;
  if (n === 0) return emptyRoot();
  if (n === 1) return leaves[lo] as Buffer;
  const k = splitPoint(n);
  return nodeHash(rangeRoot(leaves, lo, lo + k), rangeRoot(leaves, lo + k, hi));
}

/** The largest power of two strictly below `n` (n >= 2). */
function splitPoint(n: number): number {
  let k = 1;
  while (k * 2 < n) k *= 2;
  return k;
}

function checkSize(leafHashes: readonly Buffer[], size: number): void {
  if (!Number.isSafeInteger(size) || size < 0 || size > leafHashes.length) {
    throw new GatehouseError(
      'INVALID_INPUT',
      `tree size ${size} is not between 0 and the ${leafHashes.length} leaves given`,
      { details: { size, leaves: leafHashes.length } },
    );
  }
}
