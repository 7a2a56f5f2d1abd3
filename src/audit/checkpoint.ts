import { canonicalBytes } from '../core/index.js';
import { verifyWithJwks } from './jwks.js';
import type { JwkSet } from './jwks.js';
import type { Signer } from './signer.js';

/** A signed tree head of one tenant's audit log (DESIGN §8, `GET /v1/audit/checkpoint`). */
export interface Checkpoint {
  tenant: string;
  treeSize: number;
  /** base64 of the RFC 6962 root hash. */
  rootHash: string;
  /** ISO 8601 time of signing. */
  timestamp: string;
  keyid: string;
  /** base64 Ed25519 signature over the JCS bytes of `{rootHash, tenant, timestamp, treeSize}`. */
  signature: string;
}

/** What a checkpoint attests. */
export interface TreeHead {
  tenant: string;
  treeSize: number;
  rootHash: Buffer;
  /** ISO 8601. */
  timestamp: string;
}

/** Signs a tree head. Safe to repeat (Ed25519 is deterministic). */
export function signCheckpoint(head: TreeHead, keyring: Signer): Checkpoint {
  const body = {
    rootHash: head.rootHash.toString('base64'),
    tenant: head.tenant,
    timestamp: head.timestamp,
    treeSize: head.treeSize,
  };
  const { keyid, sig } = keyring.sign(canonicalBytes(body));
  return { ...body, keyid, signature: sig.toString('base64') };
}

/**
 * True when `cp` (parsed JSON of any shape) is a well-formed checkpoint signed by a key of `jwks`.
 * It says nothing about whether the tree head is consistent with earlier ones; use
 * `verifyConsistency` for that. Never throws.
 */
export function verifyCheckpoint(cp: unknown, jwks: JwkSet): boolean {
  if (typeof cp !== 'object' || cp === null) return false;
  const c = cp as Record<string, unknown>;
  if (
    typeof c.tenant !== 'string' ||
    typeof c.treeSize !== 'number' ||
    !Number.isSafeInteger(c.treeSize) ||
    c.treeSize < 0 ||
    typeof c.rootHash !== 'string' ||
    typeof c.timestamp !== 'string' ||
    typeof c.keyid !== 'string' ||
    typeof c.signature !== 'string'
  ) {
    return false;
  }
  const body = {
    rootHash: c.rootHash,
    tenant: c.tenant,
    timestamp: c.timestamp,
    treeSize: c.treeSize,
  };
  return verifyWithJwks(jwks, c.keyid, canonicalBytes(body), Buffer.from(c.signature, 'base64'));
}
