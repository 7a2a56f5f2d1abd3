import { createPublicKey } from 'node:crypto';
import type { KeyObject } from 'node:crypto';
import { jwkThumbprint } from './jwk-thumbprint.js';
import type { Jwk } from './jwks.js';

/** A private signing key and its id. */
export interface ActiveKey {
  kid: string;
  privateKey: KeyObject;
}

/** The published JWK of an Ed25519 public key `x` with id `kid`. */
export function jwkOf(kid: string, x: string): Jwk {
  return { kty: 'OKP', crv: 'Ed25519', x, kid, alg: 'EdDSA', use: 'sig' };
}

/** The public JWK of `key`. */
export function publicJwk(key: ActiveKey): Jwk {
  return jwkOf(key.kid, publicX(key.privateKey));
}

/** The RFC 7638 thumbprint of the public half of an Ed25519 private key. */
export function kidOf(privateKey: KeyObject): string {
  return jwkThumbprint({ crv: 'Ed25519', kty: 'OKP', x: publicX(privateKey) });
}

function publicX(privateKey: KeyObject): string {
  const { x } = createPublicKey(privateKey).export({ format: 'jwk' });
  if (typeof x !== 'string') throw new Error('unreachable: Ed25519 JWK without x');
  return x;
}
