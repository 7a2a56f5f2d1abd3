/** A signature and the id of the key that made it. */
export interface KeyedSignature {
  /** RFC 7638 JWK thumbprint of the public key, as published in the JWK set. */
  keyid: string;
  sig: Buffer;
}

/** Anything that signs bytes with a published key; {@link SigningKeyring} is the real one. */
export interface Signer {
  /** Signs `data` with the active key. Synchronous; safe to repeat. */
  sign(data: Uint8Array): KeyedSignature;
}
