import { concat, equalBytes, sha256 } from './bytes.js';

/** RFC 6962 leaf hash: SHA-256(0x00 ‖ leaf). */
export function leafHash(leaf: Uint8Array): Promise<Uint8Array> {
  return sha256(concat(new Uint8Array([0]), leaf));
}

function nodeHash(left: Uint8Array, right: Uint8Array): Promise<Uint8Array> {
  return sha256(concat(new Uint8Array([1]), left, right));
}

/**
 * RFC 9162 §2.1.3.2: true when `leaf` is leaf `index` of the tree of `treeSize` leaves whose root
 * is `root`, by the audit path `proof`. Malformed input gives false.
 */
export async function verifyInclusion(
  leaf: Uint8Array,
  index: number,
  treeSize: number,
  proof: readonly Uint8Array[],
  root: Uint8Array,
): Promise<boolean> {
  if (!Number.isSafeInteger(index) || !Number.isSafeInteger(treeSize)) return false;
  if (index < 0 || index >= treeSize) return false;
  if (leaf.length !== 32 || proof.some((p) => p.length !== 32)) return false;
  let fn = index;
  let sn = treeSize - 1;
  let r = leaf;
  for (const p of proof) {
    if (sn === 0) return false;
    if (fn % 2 === 1 || fn === sn) {
      r = await nodeHash(p, r);
      while (fn % 2 === 0 && fn !== 0) {
        fn = Math.floor(fn / 2);
        sn = Math.floor(sn / 2);
      }
    } else {
      r = await nodeHash(r, p);
    }
    fn = Math.floor(fn / 2);
    sn = Math.floor(sn / 2);
  }
  return sn === 0 && equalBytes(r, root);
}
