import { createPrivateKey, generateKeyPairSync, sign } from 'node:crypto';
import type { KeyObject } from 'node:crypto';
import { chmod, mkdir, readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { GatehouseError, isoTime } from '../core/index.js';
import type { Clock } from '../core/index.js';
import { writeFileAtomic } from './atomic-write.js';
import { jwkThumbprint } from './jwk-thumbprint.js';
import type { Jwk, JwkSet } from './jwks.js';
import { kidOf, publicJwk } from './signing-key-material.js';
import type { ActiveKey } from './signing-key-material.js';
import type { KeyedSignature, Signer } from './signer.js';

/** One entry of `public-keys.json`: a public JWK and when it was in use. */
export interface PublishedKey extends Jwk {
  /** ISO 8601 time the key was created. */
  createdAt: string;
  /** ISO 8601 time the key stopped signing; absent on the active key. */
  retiredAt?: string;
}

const PUBLIC_KEYS_FILE = 'public-keys.json';
const KID_PATTERN = /^[A-Za-z0-9_-]{43}$/;

/** The keys that sign receipts and checkpoints, whatever holds them. */
export interface Keyring extends Signer {
  /** The RFC 7638 thumbprint of the active key; the `keyid` of every new signature. */
  readonly activeKeyId: string;
  /** Every public key ever used, oldest first, as a fresh JWK set (`GET /v1/receipt-keys`). */
  jwks(): JwkSet;
  /** Reloads keys another process may have changed; a no-op where one process owns them. */
  refresh(): Promise<void>;
  /** Makes a new key the active one; the old one stays published. */
  rotate(): Promise<void>;
  /** Stops any background work. Safe to call twice. */
  close(): void;
}

/**
 * The Ed25519 keys that sign receipts and checkpoints, for one gateway. In `dir` (mode 0700):
 * - `public-keys.json` — every public key ever used, oldest first, with `createdAt` and, once
 *   rotated out, `retiredAt`; the one entry without `retiredAt` is the active key. It is the
 *   single source of truth, replaced atomically.
 * - `<kid>.pem` — the active private key (PKCS8 PEM, mode 0600), written atomically.
 *
 * On {@link SigningKeyring.rotate} the retired private key file is deleted: a retired key never
 * signs again, and a deleted key cannot be stolen. Its public key stays published so old receipts
 * keep verifying. One process owns a directory at a time.
 */
export class SigningKeyring implements Keyring {
  #active: ActiveKey;
  #published: PublishedKey[];
  #rotation: Promise<void> = Promise.resolve();

  private constructor(
    private readonly dir: string,
    private readonly clock: Clock,
    active: ActiveKey,
    published: PublishedKey[],
  ) {
    this.#active = active;
    this.#published = published;
  }

  /**
   * Opens the keyring in `dir`, creating the directory and a first key when there is none.
   * Safe to repeat: later opens load the same keys.
   * @throws GatehouseError `INTERNAL` when the files are unreadable or inconsistent (a corrupt
   *   `public-keys.json`, a missing or mismatched private key file); the message says which.
   */
  static async open(dir: string, clock: Clock): Promise<SigningKeyring> {
    await mkdir(dir, { recursive: true, mode: 0o700 });
    await chmod(dir, 0o700);
    const published = await readPublishedKeys(dir);
    if (published === undefined) {
      const active = await createKey(dir);
      const first = [{ ...publicJwk(active), createdAt: isoTime(clock.now()) }];
      await writePublishedKeys(dir, first);
      return new SigningKeyring(dir, clock, active, first);
    }
    const current = published.filter((k) => k.retiredAt === undefined);
    if (current.length !== 1 || current[0] === undefined) {
      throw keyError(dir, `${PUBLIC_KEYS_FILE} must have exactly one key without retiredAt`);
    }
    const active = await loadPrivateKey(dir, current[0].kid);
    // A crash between publishing a rotation and deleting the old private key leaves it behind.
    for (const k of published) {
      if (k.retiredAt !== undefined) await rm(join(dir, `${k.kid}.pem`), { force: true });
    }
    return new SigningKeyring(dir, clock, active, published);
  }

  /** The RFC 7638 thumbprint of the active key; the `keyid` of every new signature. */
  get activeKeyId(): string {
    return this.#active.kid;
  }

  /** Signs `data` with the active key (Ed25519, no prehash). Synchronous; safe to repeat. */
  sign(data: Uint8Array): KeyedSignature {
    return { keyid: this.#active.kid, sig: sign(null, data, this.#active.privateKey) };
  }

  /** Every public key ever used, oldest first, as a fresh JWK set (for `GET /v1/receipt-keys`). */
  jwks(): JwkSet {
    return {
      keys: this.#published.map((k) => ({
        kty: k.kty,
        crv: k.crv,
        x: k.x,
        kid: k.kid,
        alg: k.alg,
        use: k.use,
      })),
    };
  }

  /** One process owns the directory: nothing to reload. */
  refresh(): Promise<void> {
    return Promise.resolve();
  }

  /** Nothing runs in the background. */
  close(): void {}

  /**
   * Makes a new key the active one. The new public key is published (atomically, with the old one
   * marked `retiredAt`) before it signs anything; then the old private key file is deleted.
   * Concurrent calls run one after another. Throws the file system's error on failure, in which
   * case the old key stays active.
   */
  rotate(): Promise<void> {
    const next = this.#rotation.then(() => this.#rotateNow());
    this.#rotation = next.catch(() => undefined);
    return next;
  }

  async #rotateNow(): Promise<void> {
    const now = isoTime(this.clock.now());
    const old = this.#active;
    const fresh = await createKey(this.dir);
    const published: PublishedKey[] = [
      ...this.#published.map((k) => (k.kid === old.kid ? { ...k, retiredAt: now } : k)),
      { ...publicJwk(fresh), createdAt: now },
    ];
    await writePublishedKeys(this.dir, published);
    this.#active = fresh;
    this.#published = published;
    await rm(join(this.dir, `${old.kid}.pem`), { force: true });
  }
}

async function createKey(dir: string): Promise<ActiveKey> {
  const { privateKey } = generateKeyPairSync('ed25519');
  const kid = kidOf(privateKey);
  const pem = privateKey.export({ type: 'pkcs8', format: 'pem' });
  await writeFileAtomic(join(dir, `${kid}.pem`), pem, 0o600);
  return { kid, privateKey };
}

async function loadPrivateKey(dir: string, kid: string): Promise<ActiveKey> {
  const file = join(dir, `${kid}.pem`);
  let privateKey: KeyObject;
  try {
    privateKey = createPrivateKey(await readFile(file, 'utf8'));
  } catch (cause) {
    throw keyError(
      dir,
      `cannot read the active private key ${file}; restore it from backup`,
      cause,
    );
  }
  if (privateKey.asymmetricKeyType !== 'ed25519' || kidOf(privateKey) !== kid) {
    throw keyError(
      dir,
      `${file} does not hold the Ed25519 key ${kid} that ${PUBLIC_KEYS_FILE} names`,
    );
  }
  return { kid, privateKey };
}

/**
 * The published keys of a keyring directory (`public-keys.json`), checked; undefined when there
 * is none yet.
 * @throws GatehouseError `INTERNAL` when the file is unreadable, not JSON or not a key list.
 */
export async function readPublishedKeys(dir: string): Promise<PublishedKey[] | undefined> {
  let text: string;
  try {
    text = await readFile(join(dir, PUBLIC_KEYS_FILE), 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw keyError(dir, `cannot read ${PUBLIC_KEYS_FILE}`, err);
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (cause) {
    throw keyError(dir, `${PUBLIC_KEYS_FILE} is not JSON`, cause);
  }
  if (!Array.isArray(parsed) || !parsed.every(isPublishedKey)) {
    throw keyError(
      dir,
      `${PUBLIC_KEYS_FILE} is not a list of Ed25519 JWKs, each with createdAt and its RFC 7638 thumbprint as kid`,
    );
  }
  return parsed;
}

function isPublishedKey(v: unknown): v is PublishedKey {
  if (typeof v !== 'object' || v === null) return false;
  const k = v as Record<string, unknown>;
  return (
    k.kty === 'OKP' &&
    k.crv === 'Ed25519' &&
    typeof k.x === 'string' &&
    typeof k.kid === 'string' &&
    KID_PATTERN.test(k.kid) &&
    jwkThumbprint({ crv: k.crv, kty: k.kty, x: k.x }) === k.kid &&
    k.alg === 'EdDSA' &&
    k.use === 'sig' &&
    typeof k.createdAt === 'string' &&
    (k.retiredAt === undefined || typeof k.retiredAt === 'string')
  );
}

async function writePublishedKeys(dir: string, keys: PublishedKey[]): Promise<void> {
  await writeFileAtomic(join(dir, PUBLIC_KEYS_FILE), `${JSON.stringify(keys, null, 2)}\n`, 0o644);
}

function keyError(dir: string, message: string, cause?: unknown): GatehouseError {
  return new GatehouseError('INTERNAL', `signing keyring ${dir}: ${message}`, {
    details: { dir },
    cause,
  });
}
