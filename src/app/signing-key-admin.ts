import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { SharedSigningKeyring, SigningKeyring, readPublishedKeys } from '../audit/index.js';
import type { Keyring } from '../audit/index.js';
import { ErrorCode, GatehouseError, systemClock } from '../core/index.js';
import { SecretCipher } from '../secrets/index.js';
import { DataDirLock, PostgresDatabase, PostgresSigningKeyStore } from '../storage/index.js';
import { keySealer } from './open-keyring.js';
import { isPostgresUrl } from './open-storage.js';

/** One receipt signing key as `gatehouse keys list` shows it (never the private key). */
export interface SigningKeyInfo {
  kid: string;
  createdAt: string;
  /** Absent on the active key. */
  retiredAt?: string;
}

/** What a rotation did. */
export interface Rotation {
  retired: string;
  active: string;
}

/**
 * The receipt and checkpoint signing keys, oldest first: of the PostgreSQL database `db` (the keys
 * every node shares) or of the data directory's `keys/` (SQLite). Reads only; safe beside running
 * gateways.
 * @throws GatehouseError NOT_FOUND when there are no keys (no gateway ever started there).
 */
export async function listSigningKeys(dataDir: string, db?: string): Promise<SigningKeyInfo[]> {
  if (isPostgresUrl(db)) {
    return withPostgres(db, async (store) => {
      const keys = await store.list();
      if (keys.length === 0) throw noKeys('the database');
      return keys.map(info);
    });
  }
  const published = await readPublishedKeys(keysDir(dataDir));
  if (published === undefined) throw noKeys(keysDir(dataDir));
  return published.map(info);
}

/** What `keys list` shows of a key, from either backend's record of it. */
function info(k: { kid: string; createdAt: string; retiredAt?: string }): SigningKeyInfo {
  return {
    kid: k.kid,
    createdAt: k.createdAt,
    ...(k.retiredAt === undefined ? {} : { retiredAt: k.retiredAt }),
  };
}

/**
 * Makes a new key the active one; the old one stays published, so receipts it signed keep
 * verifying. On PostgreSQL (`db`) the running nodes take the new key within seconds (the private
 * key is sealed under the master key: `GATEHOUSE_MASTER_KEY`, or the data directory's key file).
 * On SQLite the data directory's gateway must be stopped: one process owns its keys.
 * @throws GatehouseError CONFLICT naming the gateway that holds the data directory; NOT_FOUND when
 *   there are no keys or (PostgreSQL) no master key; INVALID_INPUT when the master key is not the
 *   one the keys were sealed under.
 */
export async function rotateSigningKeys(dataDir: string, db?: string): Promise<Rotation> {
  if (isPostgresUrl(db)) {
    const cipher = await SecretCipher.load({
      keyFile: join(keysDir(dataDir), 'master.key'),
      create: false,
    });
    return withPostgres(db, async (store) => {
      if ((await store.list()).length === 0) throw noKeys('the database');
      const keyring = await SharedSigningKeyring.open({
        store,
        sealer: keySealer(cipher),
        clock: systemClock,
        refreshMs: 0,
      });
      return rotate(keyring);
    });
  }
  if (!existsSync(join(keysDir(dataDir), 'public-keys.json'))) throw noKeys(keysDir(dataDir));
  const lock = DataDirLock.acquire(resolve(dataDir));
  try {
    return await rotate(await SigningKeyring.open(keysDir(dataDir), systemClock));
  } finally {
    lock.release();
  }
}

async function rotate(keyring: Keyring): Promise<Rotation> {
  try {
    const retired = keyring.activeKeyId;
    await keyring.rotate();
    return { retired, active: keyring.activeKeyId };
  } finally {
    keyring.close();
  }
}

async function withPostgres<T>(
  url: string,
  use: (store: PostgresSigningKeyStore) => Promise<T>,
): Promise<T> {
  const db = await PostgresDatabase.open({ url, poolSize: 2 });
  try {
    return await use(new PostgresSigningKeyStore(db));
  } finally {
    await db.close();
  }
}

function keysDir(dataDir: string): string {
  return join(resolve(dataDir), 'keys');
}

function noKeys(where: string): GatehouseError {
  return new GatehouseError(
    ErrorCode.NOT_FOUND,
    `No signing keys in ${where}: no gateway has started there yet (pass --data DIR, or --db for PostgreSQL).`,
  );
}
