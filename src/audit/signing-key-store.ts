/** A private key sealed under the master key, as stored (the shape of a sealed secret). */
export interface SealedKey {
  ciphertext: string;
  iv: string;
  tag: string;
  /** The id of the master key that sealed it. */
  keyId: string;
}

/** One signing key as a shared database holds it. */
export interface StoredSigningKey {
  /** RFC 7638 thumbprint of the public key. */
  kid: string;
  /** The Ed25519 public key (base64url, the JWK's `x`). */
  x: string;
  /** ISO 8601 time the key was created. */
  createdAt: string;
  /** ISO 8601 time it stopped signing; absent on the active key. */
  retiredAt?: string;
  /** The PKCS8 PEM private key, sealed; present on the active key only. */
  sealed?: SealedKey;
}

/**
 * The signing keys of every node of one database. At most one key is active (no `retiredAt`) at
 * any time; a retired key's private half is gone from the store.
 */
export interface SigningKeyStore {
  /** Every key ever used, oldest first. Safe to repeat. */
  list(): Promise<StoredSigningKey[]>;
  /**
   * Stores `key` as the first, active key when the store holds no key yet.
   * @returns false (nothing stored) when another node stored one first.
   */
  addFirst(key: StoredSigningKey): Promise<boolean>;
  /**
   * Retires `oldKid` at `at` (dropping its private key) and stores `fresh` as the active key, in
   * one transaction, only if `oldKid` is still the active key.
   * @returns false (nothing changed) when another node rotated it first.
   */
  rotate(oldKid: string, fresh: StoredSigningKey, at: string): Promise<boolean>;
}

/** Seals the private keys under the master key; `app/` gives it the secrets' cipher. */
export interface KeySealer {
  /** The id of the master key it seals with. */
  readonly keyId: string;
  seal(kid: string, pem: string): SealedKey;
  /** @throws when `sealed` was sealed with another master key or was altered. */
  unseal(kid: string, sealed: SealedKey): string;
}
