import { createHash, randomBytes } from 'node:crypto';
import { chmod, link, mkdir, open, readFile, rm, stat } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { ErrorCode, GatehouseError } from '../core/index.js';

/** The environment variable that holds the master key (base64 of 32 bytes). */
export const MASTER_KEY_ENV = 'GATEHOUSE_MASTER_KEY';

/** Bytes of an AES-256 key. */
export const MASTER_KEY_BYTES = 32;

/** Options of {@link loadMasterKey}. */
export interface MasterKeyOptions {
  /** The key file, conventionally `DATA/keys/master.key`; created when absent and no env key. */
  keyFile: string;
  /** Where {@link MASTER_KEY_ENV} is read; default `process.env`. */
  env?: NodeJS.ProcessEnv;
  /** Create the key file when absent (default true); false: a missing key is NOT_FOUND. */
  create?: boolean;
}

/** The master key and where it came from. */
export interface MasterKey {
  key: Buffer;
  /** {@link masterKeyId} of the key. */
  keyId: string;
  source: 'env' | 'file';
}

/**
 * The id of a master key: the first 16 hex digits of its SHA-256. Stored beside each ciphertext so
 * a later key rotation can tell which key sealed what; it reveals nothing usable about the key.
 */
export function masterKeyId(key: Uint8Array): string {
  return createHash('sha256').update(key).digest('hex').slice(0, 16);
}

/**
 * Finds the master key: {@link MASTER_KEY_ENV} when set (it wins over the file), else the key
 * file, which is created (32 random bytes, mode 0600, directory 0700) when absent. Safe to repeat
 * and safe against a concurrent first start: the file is created whole or not at all.
 * @throws GatehouseError INVALID_INPUT when the env key is not base64 of 32 bytes, or the key file
 *   is not 32 bytes (raw, or base64 text), or is readable by group or others; NOT_FOUND when there
 *   is none and `create` is false.
 */
export async function loadMasterKey(options: MasterKeyOptions): Promise<MasterKey> {
  const fromEnv = (options.env ?? process.env)[MASTER_KEY_ENV];
  if (fromEnv !== undefined && fromEnv.trim() !== '') {
    const key = decodeBase64Key(fromEnv.trim());
    if (!key) {
      throw new GatehouseError(
        ErrorCode.INVALID_INPUT,
        `${MASTER_KEY_ENV} must be the base64 of exactly ${MASTER_KEY_BYTES} bytes (make one with: openssl rand -base64 32).`,
      );
    }
    return { key, keyId: masterKeyId(key), source: 'env' };
  }
  let key = await readKeyFile(options.keyFile);
  if (key === undefined && options.create === false) {
    throw new GatehouseError(
      ErrorCode.NOT_FOUND,
      `No master key: ${MASTER_KEY_ENV} is not set and there is no key file at ${options.keyFile}. Set ${MASTER_KEY_ENV} as the gateway has it, or pass the data directory of a node (--data DIR).`,
    );
  }
  key ??= await createKeyFile(options.keyFile);
  return { key, keyId: masterKeyId(key), source: 'file' };
}

function decodeBase64Key(text: string): Buffer | undefined {
  if (!/^[A-Za-z0-9+/]+={0,2}$/.test(text)) return undefined;
  const key = Buffer.from(text, 'base64');
  return key.length === MASTER_KEY_BYTES ? key : undefined;
}

async function readKeyFile(file: string): Promise<Buffer | undefined> {
  let bytes: Buffer;
  try {
    bytes = await readFile(file);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw new GatehouseError(ErrorCode.INVALID_INPUT, `Cannot read the master key file ${file}.`, {
      cause: err,
    });
  }
  const mode = (await stat(file)).mode & 0o777;
  if ((mode & 0o077) !== 0) {
    throw new GatehouseError(
      ErrorCode.INVALID_INPUT,
      `The master key file ${file} is readable by others (mode ${mode.toString(8)}); run chmod 600 on it.`,
    );
  }
  // Raw bytes as created here, or base64 text for a key written by hand.
  const key =
    bytes.length === MASTER_KEY_BYTES ? bytes : decodeBase64Key(bytes.toString('utf8').trim());
  if (!key) {
    throw new GatehouseError(
      ErrorCode.INVALID_INPUT,
      `The master key file ${file} must hold exactly ${MASTER_KEY_BYTES} bytes (raw, or as base64 text); it holds ${bytes.length}.`,
    );
  }
  return key;
}

/** Creates the key file whole: written to a temporary file, then hard-linked into place. */
async function createKeyFile(file: string): Promise<Buffer> {
  const dir = dirname(file);
  await mkdir(dir, { recursive: true, mode: 0o700 });
  await chmod(dir, 0o700);
  const key = randomBytes(MASTER_KEY_BYTES);
  const tmp = join(dir, `.master.${randomBytes(6).toString('hex')}.tmp`);
  try {
    const fh = await open(tmp, 'wx', 0o600);
    try {
      await fh.writeFile(key);
      await fh.sync();
    } finally {
      await fh.close();
    }
    try {
      await link(tmp, file);
    } catch (err) {
      // Another process created it first: use theirs.
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      const theirs = await readKeyFile(file);
      if (!theirs) throw err;
      return theirs;
    }
  } finally {
    await rm(tmp, { force: true });
  }
  const dh = await open(dir, 'r');
  try {
    await dh.sync();
  } finally {
    await dh.close();
  }
  return key;
}
