import { createHash } from 'node:crypto';
import { canonicalJson } from '../core/index.js';

/**
 * RFC 7638 thumbprint of an OKP public key: base64url (no padding) of the SHA-256 of the JSON
 * `{"crv","kty","x"}` with members in lexicographic order and no whitespace. Used as the `kid`.
 */
export function jwkThumbprint(jwk: { crv: string; kty: string; x: string }): string {
  return createHash('sha256')
    .update(canonicalJson({ crv: jwk.crv, kty: jwk.kty, x: jwk.x }))
    .digest('base64url');
}
