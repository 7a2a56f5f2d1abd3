import { nodeHash } from './merkle-hash.js';

const HASH_SIZE = 32;

/**
 * Verifies an RFC 9162 §2.1.3.2 inclusion proof: that `leafHash` is leaf `index` of the tree of
 * `treeSize` leaves whose root is `root`. Never throws; any malformed input (including a leaf or proof
 * hash that is not 32 bytes) gives false.
 */
export function verifyInclusion(
  leafHash: Uint8Array,
  index: number,
  treeSize: number,
  proof: readonly Uint8Array[],
  root: Uint8Array,
): boolean {
  if (!isCount(index) || !isCount(treeSize) || index >= treeSize || !isList(proof)) {
    return false;
  }
  try {
    if (!isHash(leafHash) || !proof.every(isHash)) return false;
    let fn = index;
    let sn = treeSize - 1;
    let r: Uint8Array = leafHash;
    for (const p of proof) {
      if (sn === 0) return false;
      if (fn % 2 === 1 || fn === sn) {
        r = nodeHash(p, r);
        while (fn % 2 === 0 && fn !== 0) {
          fn = half(fn);
          sn = half(sn);
        }
      } else {
        r = nodeHash(r, p);
      }
      fn = half(fn);
      sn = half(sn);
    }
    return sn === 0 && bytesEqual(r, root);
  } catch {
    return false;
  }
}

/**
 * Verifies an RFC 9162 §2.1.4.2 consistency proof: that the tree of `size1` leaves with root
 * `root1` is a prefix of the tree of `size2` leaves with root `root2`. Equal sizes need an empty
 * proof and equal roots; `size1 = 0` is always refused (consistency with the empty tree proves
 * nothing). Never throws; any malformed input gives false.
 */
export function verifyConsistency(
  size1: number,
  size2: number,
  proof: readonly Uint8Array[],
  root1: Uint8Array,
  root2: Uint8Array,
): boolean {
  if (!isCount(size1) || !isCount(size2) || !isList(proof)) return false;
  if (size1 === 0 || size2 < size1) return false;
  try {
    if (size1 === size2) return proof.length === 0 && bytesEqual(root1, root2);
    if (proof.length === 0 || !proof.every(isHash)) return false;
    const path: readonly Uint8Array[] = isPowerOfTwo(size1) ? [root1, ...proof] : proof;
    let fn = size1 - 1;
    let sn = size2 - 1;
    while (fn % 2 === 1) {
      fn = half(fn);
      sn = half(sn);
    }
    let fr = path[0] as Uint8Array;
    let sr = fr;
    for (const c of path.slice(1)) {
      if (sn === 0) return false;
      if (fn % 2 === 1 || fn === sn) {
        fr = nodeHash(c, fr);
        sr = nodeHash(c, sr);
        while (fn % 2 === 0 && fn !== 0) {
          fn = half(fn);
          sn = half(sn);
        }
      } else {
        sr = nodeHash(sr, c);
      }
      fn = half(fn);
      sn = half(sn);
    }
    return sn === 0 && bytesEqual(fr, root1) && bytesEqual(sr, root2);
  } catch {
    return false;
  }
}

function isHash(h: unknown): boolean {
  return h instanceof Uint8Array && h.length === HASH_SIZE;
}

function isCount(n: unknown): n is number {
  return typeof n === 'number' && Number.isSafeInteger(n) && n >= 0;
}

// Sizes may exceed 2^31, so no bitwise operators.
function half(n: number): number {
  return Math.floor(n / 2);
}

function isPowerOfTwo(n: number): boolean {
  let x = n;
  while (x > 1 && x % 2 === 0) x /= 2;
  return x === 1;
}

function bytesEqual(a: Uint8Array, b: Uint8Array): boolean {
  return Buffer.from(a.buffer, a.byteOffset, a.byteLength).equals(b);
}

// A plain boolean, not a type guard: Array.isArray would narrow a readonly array to any[].
function isList(v: unknown): boolean {
  return Array.isArray(v);
}
