import { createPrivateKey, generateKeyPairSync, sign } from 'node:crypto';
import { ErrorCode, GatehouseError, isoTime } from '../core/index.js';
import type { Clock } from '../core/index.js';
import type { JwkSet } from './jwks.js';
import { jwkOf, kidOf } from './signing-key-material.js';
import type { ActiveKey } from './signing-key-material.js';
import type { KeyedSignature } from './signer.js';
import type { KeySealer, SigningKeyStore, StoredSigningKey } from './signing-key-store.js';
import type { Keyring } from './signing-keys.js';

/** How often a node looks for a rotation made by another node, unless told. */
const DEFAULT_REFRESH_MS = 5_000;

/** Options of {@link SharedSigningKeyring.open}. */
export interface SharedSigningKeyringOptions {
  store: SigningKeyStore;
  sealer: KeySealer;
  clock: Clock;
  /** How often to reload the keys (another node may have rotated them); 0 never. Default 5 s. */
  refreshMs?: number;
}

/**
 * The Ed25519 keys that sign receipts and checkpoints when several nodes share one database: the
 * keys live in the database, each private key sealed under the master key every node is given, so
 * whatever node signs, the one published key set verifies it. The first node to start makes the
 * first key; {@link rotate} on any node retires the active key for all (the others take the new
 * one at their next {@link refresh}, and their {@link jwks} shows it at once once refreshed).
 * `close()` is safe to call twice.
 */
export class SharedSigningKeyring implements Keyring {
  #active: ActiveKey;
  #keys: StoredSigningKey[];
  #rotation: Promise<void> = Promise.resolve();
  readonly #timer: NodeJS.Timeout | undefined;

  private constructor(
    private readonly options: SharedSigningKeyringOptions,
    active: ActiveKey,
    keys: StoredSigningKey[],
  ) {
    this.#active = active;
    this.#keys = keys;
    const every = options.refreshMs ?? DEFAULT_REFRESH_MS;
    if (every > 0) {
      this.#timer = setInterval(() => void this.refresh().catch(() => undefined), every);
      this.#timer.unref();
    }
  }

  /**
   * Loads the keys of the database, making the first one when there is none (nodes starting
   * together agree on one).
   * @throws GatehouseError INVALID_INPUT when the active private key does not open with this
   *   node's master key (the message names both master keys and what to do); the store's error
   *   when the database cannot be read.
   */
  static async open(options: SharedSigningKeyringOptions): Promise<SharedSigningKeyring> {
    let keys = await options.store.list();
    if (keys.length === 0) {
      const fresh = newKey(options.sealer, isoTime(options.clock.now()));
      await options.store.addFirst(fresh.stored);
      keys = await options.store.list();
    }
    const active = openActive(keys, options.sealer);
    return new SharedSigningKeyring(options, active, keys);
  }

  /** The RFC 7638 thumbprint of the active key; the `keyid` of every new signature. */
  get activeKeyId(): string {
    return this.#active.kid;
  }

  /** Signs `data` with the active key (Ed25519, no prehash). Synchronous; safe to repeat. */
  sign(data: Uint8Array): KeyedSignature {
    return { keyid: this.#active.kid, sig: sign(null, data, this.#active.privateKey) };
  }

  /** Every public key of the database as last loaded, oldest first. */
  jwks(): JwkSet {
    return { keys: this.#keys.map((k) => jwkOf(k.kid, k.x)) };
  }

  /**
   * Reloads the keys: a key another node made active becomes this node's signing key. Safe to
   * repeat. @throws the store's error (the loaded keys stay in use) or INVALID_INPUT as `open`.
   */
  async refresh(): Promise<void> {
    const keys = await this.options.store.list();
    const current = keys.find((k) => k.retiredAt === undefined);
    if (current && current.kid !== this.#active.kid) {
      this.#active = openActive(keys, this.options.sealer);
    }
    this.#keys = keys;
  }

  /**
   * Makes a new key the active one for every node: the old key is retired and its private key
   * dropped in the same transaction that stores the new one. When another node rotated first,
   * its key is taken instead. Concurrent calls run one after another.
   */
  rotate(): Promise<void> {
    const next = this.#rotation.then(() => this.#rotateNow());
    this.#rotation = next.catch(() => undefined);
    return next;
  }

  async #rotateNow(): Promise<void> {
    const now = isoTime(this.options.clock.now());
    const fresh = newKey(this.options.sealer, now);
    if (await this.options.store.rotate(this.#active.kid, fresh.stored, now)) {
      this.#active = fresh.active;
    }
    await this.refresh();
  }

  /** Stops the periodic reload. Safe to call twice. */
  close(): void {
    if (this.#timer) clearInterval(this.#timer);
  }
}

function newKey(
  sealer: KeySealer,
  createdAt: string,
): { active: ActiveKey; stored: StoredSigningKey } {
  const { privateKey, publicKey } = generateKeyPairSync('ed25519');
  const kid = kidOf(privateKey);
  const { x } = publicKey.export({ format: 'jwk' });
  const pem = privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
  return {
    active: { kid, privateKey },
    stored: { kid, x: String(x), createdAt, sealed: sealer.seal(kid, pem) },
  };
}

function openActive(keys: StoredSigningKey[], sealer: KeySealer): ActiveKey {
  const current = keys.filter((k) => k.retiredAt === undefined);
  const active = current[0];
  if (current.length !== 1 || active?.sealed === undefined) {
    throw new GatehouseError(
      ErrorCode.INTERNAL,
      `the database must hold exactly one active signing key with its sealed private key; it holds ${current.length}`,
    );
  }
  const sealed = active.sealed;
  if (sealed.keyId !== sealer.keyId) {
    throw new GatehouseError(
      ErrorCode.INVALID_INPUT,
      `The signing keys in the database are sealed with master key ${sealed.keyId}, but this node's master key is ${sealer.keyId}. Every node of one database needs the same master key: start this node with the others' key (GATEHOUSE_MASTER_KEY, or their keys/master.key in its data directory).`,
      { details: { reason: 'wrong-master-key', keyId: sealer.keyId, sealedKeyId: sealed.keyId } },
    );
  }
  let privateKey;
  try {
    privateKey = createPrivateKey(sealer.unseal(active.kid, sealed));
  } catch (cause) {
    throw new GatehouseError(
      ErrorCode.INVALID_INPUT,
      `The active signing key ${active.kid} in the database does not open with master key ${sealer.keyId}: it was altered. Restore the signing_keys table from backup.`,
      { cause, details: { reason: 'undecryptable', keyId: sealer.keyId } },
    );
  }
  if (privateKey.asymmetricKeyType !== 'ed25519' || kidOf(privateKey) !== active.kid) {
    throw new GatehouseError(
      ErrorCode.INTERNAL,
      `the sealed private key of signing key ${active.kid} holds another key`,
    );
  }
  return { kid: active.kid, privateKey };
}
