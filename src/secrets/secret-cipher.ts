import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { ErrorCode, GatehouseError } from '../core/index.js';
import { MASTER_KEY_BYTES, loadMasterKey, masterKeyId } from './master-key.js';
import type { MasterKeyOptions } from './master-key.js';

/** Which secret version a ciphertext belongs to; bound into it as additional authenticated data. */
export interface SecretBinding {
  tenant: string;
  name: string;
  version: number;
}

/** A sealed value as stored: base64 ciphertext, IV and tag, and the id of the key that sealed it. */
export interface SealedSecret {
  ciphertext: string;
  iv: string;
  tag: string;
  keyId: string;
}

const IV_BYTES = 12;
const TAG_BYTES = 16;

/**
 * AES-256-GCM under the master key. Each seal draws a fresh random 12-byte IV; the additional
 * authenticated data is `tenant \0 name \0 version`, so a ciphertext copied to another secret,
 * tenant or version fails to open. Stateless and synchronous; safe to share.
 */
export class SecretCipher {
  /** {@link masterKeyId} of the key in use. */
  readonly keyId: string;
  readonly #key: Buffer;

  private constructor(key: Buffer) {
    this.#key = Buffer.from(key);
    this.keyId = masterKeyId(key);
  }

  /**
   * A cipher over `key`.
   * @throws GatehouseError INVALID_INPUT when the key is not 32 bytes.
   */
  static fromKey(key: Uint8Array): SecretCipher {
    if (key.length !== MASTER_KEY_BYTES) {
      throw new GatehouseError(
        ErrorCode.INVALID_INPUT,
        `A master key must be ${MASTER_KEY_BYTES} bytes; this one is ${key.length}.`,
      );
    }
    return new SecretCipher(Buffer.from(key));
  }

  /**
   * A cipher over the master key found by {@link loadMasterKey} (env var first, else the key file,
   * created when absent). @throws what {@link loadMasterKey} throws.
   */
  static async load(options: MasterKeyOptions): Promise<SecretCipher> {
    return new SecretCipher((await loadMasterKey(options)).key);
  }

  /** Seals `value` for `binding`. Each call gives a different ciphertext (fresh IV). */
  seal(binding: SecretBinding, value: string): SealedSecret {
    const iv = randomBytes(IV_BYTES);
    const cipher = createCipheriv('aes-256-gcm', this.#key, iv, { authTagLength: TAG_BYTES });
    cipher.setAAD(aad(binding));
    const ciphertext = Buffer.concat([cipher.update(value, 'utf8'), cipher.final()]);
    return {
      ciphertext: ciphertext.toString('base64'),
      iv: iv.toString('base64'),
      tag: cipher.getAuthTag().toString('base64'),
      keyId: this.keyId,
    };
  }

  /**
   * Opens a sealed value of `binding`.
   * @throws GatehouseError CREDENTIAL_UNAVAILABLE, never showing any plaintext, when it was sealed
   *   under another master key (the message names both key ids), or when the ciphertext, IV, tag
   *   or binding do not authenticate (tampered, or moved from another secret).
   */
  unseal(binding: SecretBinding, sealed: SealedSecret): string {
    const what = `secret ${binding.name} version ${binding.version}`;
    if (sealed.keyId !== this.keyId) {
      throw new GatehouseError(
        ErrorCode.CREDENTIAL_UNAVAILABLE,
        `The ${what} was sealed with master key ${sealed.keyId}, but this gateway's master key is ${this.keyId}; start it with the key that sealed the secret, or put the secret again.`,
        { details: { reason: 'wrong-master-key', keyId: this.keyId, sealedKeyId: sealed.keyId } },
      );
    }
    try {
      const iv = Buffer.from(sealed.iv, 'base64');
      const tag = Buffer.from(sealed.tag, 'base64');
      if (iv.length !== IV_BYTES || tag.length !== TAG_BYTES) throw new Error('bad IV or tag size');
      const decipher = createDecipheriv('aes-256-gcm', this.#key, iv, {
        authTagLength: TAG_BYTES,
      });
      decipher.setAAD(aad(binding));
      decipher.setAuthTag(tag);
      return Buffer.concat([
        decipher.update(Buffer.from(sealed.ciphertext, 'base64')),
        decipher.final(),
      ]).toString('utf8');
    } catch (cause) {
      throw new GatehouseError(
        ErrorCode.CREDENTIAL_UNAVAILABLE,
        `The ${what} does not decrypt with master key ${this.keyId}: its ciphertext was altered or does not belong to this tenant, name and version.`,
        { details: { reason: 'undecryptable', keyId: this.keyId }, cause },
      );
    }
  }
}

function aad(b: SecretBinding): Buffer {
  return Buffer.from(`${b.tenant}\u0000${b.name}\u0000${b.version}`, 'utf8');
}
