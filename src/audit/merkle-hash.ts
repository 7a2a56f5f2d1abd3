import { createHash } from 'node:crypto';

const LEAF_PREFIX = Buffer.from([0x00]);
const NODE_PREFIX = Buffer.from([0x01]);

/** RFC 6962 leaf hash: SHA-256 of `0x00 || data`. */
export function leafHash(data: Uint8Array): Buffer {
  return createHash('sha256').update(LEAF_PREFIX).update(data).digest();
}

/** RFC 6962 interior node hash: SHA-256 of `0x01 || left || right`. */
export function nodeHash(left: Uint8Array, right: Uint8Array): Buffer {
  return createHash('sha256').update(NODE_PREFIX).update(left).update(right).digest();
}

/** The root hash of the empty tree: SHA-256 of no bytes. */
export function emptyRoot(): Buffer {
  return createHash('sha256').digest();
}
