import { createHash } from 'node:crypto';
import canonicalizeImpl from 'canonicalize';

// canonicalize 2.x ships CommonJS typings with `export =`; under NodeNext the default import is
// the function itself at runtime.
const canonicalizeFn = canonicalizeImpl as unknown as (value: unknown) => string | undefined;

/**
 * RFC 8785 (JCS) canonical JSON text of `value`.
 * @throws TypeError when `value` has no JSON form (undefined, a function, a non-finite number).
 */
export function canonicalJson(value: unknown): string {
  const text = canonicalizeFn(value);
  if (text === undefined) throw new TypeError('value has no canonical JSON form');
  return text;
}

/** UTF-8 bytes of the RFC 8785 canonical JSON of `value`. */
export function canonicalBytes(value: unknown): Buffer {
  return Buffer.from(canonicalJson(value), 'utf8');
}

/** Lowercase hex SHA-256 of `data`. */
export function sha256Hex(data: string | Uint8Array): string {
  return createHash('sha256').update(data).digest('hex');
}

/** Lowercase hex SHA-256 of the canonical JSON of `value`: the digest of descriptors and records. */
export function canonicalDigest(value: unknown): string {
  return sha256Hex(canonicalJson(value));
}
