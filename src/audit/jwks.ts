import { createPublicKey, verify } from 'node:crypto';
import type { KeyObject } from 'node:crypto';

/** A published Ed25519 public key (RFC 8037 OKP JWK). */
export interface Jwk {
  kty: 'OKP';
  crv: 'Ed25519';
  /** base64url of the 32-byte public key. */
  x: string;
  /** RFC 7638 thumbprint of `{crv, kty, x}`. */
  kid: string;
  alg: 'EdDSA';
  use: 'sig';
}

/** A JWK set, as served at `GET /v1/receipt-keys`. */
export interface JwkSet {
  keys: Jwk[];
}

// Keyed by the JWK object itself, so a cached key can never be confused with another set's key of
// the same kid, and dropping a set drops its cache.
const keyCache = new WeakMap<object, KeyObject>();

/**
 * True when `sig` is a valid Ed25519 signature over `data` by the key `keyid` of `jwks`.
 * Never throws: an unknown keyid, a malformed JWK or a key that is not Ed25519 gives false.
 * KeyObjects are cached per JWK object, so verifying many signatures against one set is cheap.
 */
export function verifyWithJwks(
  jwks: JwkSet,
  keyid: string,
  data: Uint8Array,
  sig: Uint8Array,
): boolean {
  try {
    const jwk = findJwk(jwks, keyid);
    if (jwk === undefined) return false;
    const key = publicKeyOf(jwk);
    return key !== undefined && verify(null, data, key, sig);
  } catch {
    return false;
  }
}

/** The JWK of `keyid` in `jwks`, or undefined. Never throws. */
export function findJwk(jwks: JwkSet, keyid: string): Jwk | undefined {
  const keys: unknown = (jwks as { keys?: unknown } | null | undefined)?.keys;
  if (!Array.isArray(keys)) return undefined;
  return (keys as unknown[]).find(
    (k): k is Jwk => typeof k === 'object' && k !== null && (k as { kid?: unknown }).kid === keyid,
  );
}

function publicKeyOf(jwk: Jwk): KeyObject | undefined {
  const cached = keyCache.get(jwk);
  if (cached !== undefined) return cached;
  if (jwk.kty !== 'OKP' || jwk.crv !== 'Ed25519' || typeof jwk.x !== 'string') return undefined;
  const key = createPublicKey({ key: { kty: jwk.kty, crv: jwk.crv, x: jwk.x }, format: 'jwk' });
  // Refuse anything but Ed25519, so a planted key of another type cannot change the algorithm.
  if (key.asymmetricKeyType !== 'ed25519') return undefined;
  keyCache.set(jwk, key);
  return key;
}
