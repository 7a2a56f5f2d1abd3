import { createHash, randomBytes } from 'node:crypto';
import {
  chmodSync,
  existsSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ManualClock, isGatehouseError } from '../../src/core/index.js';
import {
  MASTER_KEY_ENV,
  SecretCipher,
  SecretService,
  loadMasterKey,
  masterKeyId,
} from '../../src/secrets/index.js';
import { SqliteDatabase } from '../../src/storage/sqlite/sqlite-database.js';
import { SqliteSecretStore } from '../../src/storage/sqlite/sqlite-secret-store.js';

const binding = { tenant: 'acme', name: 'github-token', version: 1 };

function caught(fn: () => unknown): unknown {
  try {
    fn();
  } catch (err) {
    return err;
  }
  throw new Error('expected a throw');
}

describe('SecretCipher', () => {
  const cipher = SecretCipher.fromKey(randomBytes(32));

  it('opens what it sealed, including unicode and 64 KiB values', () => {
    for (const value of ['ghp_abc123', 'pässwörd ✓ 🔑', 'x'.repeat(64 * 1024)]) {
      expect(cipher.unseal(binding, cipher.seal(binding, value))).toBe(value);
    }
  });

  it('draws a fresh 12-byte IV for every seal and never stores the plaintext', () => {
    const a = cipher.seal(binding, 'same value');
    const b = cipher.seal(binding, 'same value');
    expect(Buffer.from(a.iv, 'base64')).toHaveLength(12);
    expect(Buffer.from(a.tag, 'base64')).toHaveLength(16);
    expect(a.iv).not.toBe(b.iv);
    expect(a.ciphertext).not.toBe(b.ciphertext);
    expect(JSON.stringify(a)).not.toContain('same value');
    expect(Buffer.from(a.ciphertext, 'base64').toString('utf8')).not.toContain('same value');
  });

  it('binds a ciphertext to its tenant, name and version', () => {
    const sealed = cipher.seal(binding, 'ghp_abc123');
    for (const moved of [
      { ...binding, name: 'other-token' },
      { ...binding, tenant: 'globex' },
      { ...binding, version: 2 },
      // The separator keeps "a" + "b\0c" apart from "a\0b" + "c".
      { tenant: 'acme\u0000github-token', name: '', version: 1 },
    ]) {
      const err = caught(() => cipher.unseal(moved, sealed));
      expect(isGatehouseError(err, 'CREDENTIAL_UNAVAILABLE')).toBe(true);
      expect((err as Error).message).toMatch(/does not decrypt with master key [0-9a-f]{16}/);
      expect((err as Error).message).not.toContain('ghp_abc123');
    }
  });

  it('refuses an altered ciphertext or tag', () => {
    const sealed = cipher.seal(binding, 'ghp_abc123');
    const flipped = Buffer.from(sealed.ciphertext, 'base64');
    flipped[0] = flipped[0]! ^ 1;
    for (const bad of [
      { ...sealed, ciphertext: flipped.toString('base64') },
      { ...sealed, tag: Buffer.alloc(16).toString('base64') },
      { ...sealed, iv: Buffer.alloc(8).toString('base64') },
    ]) {
      expect(
        isGatehouseError(
          caught(() => cipher.unseal(binding, bad)),
          'CREDENTIAL_UNAVAILABLE',
        ),
      ).toBe(true);
    }
  });

  it('fails clearly with the wrong master key, naming both key ids', () => {
    const other = SecretCipher.fromKey(randomBytes(32));
    const sealed = cipher.seal(binding, 'ghp_abc123');
    const err = caught(() => other.unseal(binding, sealed));
    expect(isGatehouseError(err, 'CREDENTIAL_UNAVAILABLE')).toBe(true);
    expect((err as Error).message).toContain(`sealed with master key ${cipher.keyId}`);
    expect((err as Error).message).toContain(`master key is ${other.keyId}`);
    // Same key id but another key (as if the stored key id were forged): the tag still refuses it.
    const forged = { ...sealed, keyId: other.keyId };
    expect((caught(() => other.unseal(binding, forged)) as Error).message).toMatch(
      /does not decrypt with master key/,
    );
  });

  it('names a key by the first 16 hex digits of its SHA-256', () => {
    const key = randomBytes(32);
    const id = createHash('sha256').update(key).digest('hex').slice(0, 16);
    expect(masterKeyId(key)).toBe(id);
    expect(SecretCipher.fromKey(key).keyId).toBe(id);
  });

  it('refuses a key that is not 32 bytes', () => {
    const err = caught(() => SecretCipher.fromKey(randomBytes(16)));
    expect(isGatehouseError(err, 'INVALID_INPUT')).toBe(true);
    expect((err as Error).message).toContain('32 bytes');
  });

  it('cannot open a stored row whose ciphertext was moved to another secret', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'gatehouse-aad-'));
    const db = await SqliteDatabase.open({ file: join(dir, 'g.db') });
    try {
      const store = new SqliteSecretStore(db);
      const service = new SecretService({ store, cipher, clock: new ManualClock() });
      await service.put('acme', 'prod-token', 'prod-value', ['deploy'], 'admin-1');
      await service.put('acme', 'dev-token', 'dev-value', ['deploy'], 'admin-1');
      // An attacker with write access to the database copies prod's ciphertext onto dev's row.
      db.raw
        .prepare(
          `UPDATE secrets SET (ciphertext, iv, tag) =
             (SELECT ciphertext, iv, tag FROM secrets WHERE name = 'prod-token')
           WHERE name = 'dev-token'`,
        )
        .run();
      const moved = (await store.latest('acme', 'dev-token'))!;
      const err = caught(() => cipher.unseal(moved, moved.sealed));
      expect(isGatehouseError(err, 'CREDENTIAL_UNAVAILABLE')).toBe(true);
      const prod = (await store.latest('acme', 'prod-token'))!;
      expect(cipher.unseal(prod, prod.sealed)).toBe('prod-value');
    } finally {
      await db.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('loadMasterKey', () => {
  let dir: string;
  let keyFile: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'gatehouse-key-'));
    keyFile = join(dir, 'keys', 'master.key');
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('creates a 32-byte key file with mode 0600 in a 0700 directory at first start, then reuses it', async () => {
    const first = await loadMasterKey({ keyFile, env: {} });
    expect(first.source).toBe('file');
    expect(statSync(keyFile).mode & 0o777).toBe(0o600);
    expect(statSync(join(dir, 'keys')).mode & 0o777).toBe(0o700);
    expect(readFileSync(keyFile)).toEqual(first.key);
    expect(first.key).toHaveLength(32);
    expect(first.keyId).toBe(masterKeyId(first.key));
    const again = await loadMasterKey({ keyFile, env: {} });
    expect(again.key).toEqual(first.key);
  });

  it('creates one key when several first starts race', async () => {
    const keys = await Promise.all(
      Array.from({ length: 8 }, () => loadMasterKey({ keyFile, env: {} })),
    );
    expect(new Set(keys.map((k) => k.keyId)).size).toBe(1);
    expect(readFileSync(keyFile)).toEqual(keys[0]!.key);
  });

  it('prefers the environment variable over the key file, and then creates no file', async () => {
    const envKey = randomBytes(32);
    const env = { [MASTER_KEY_ENV]: envKey.toString('base64') };
    const fromEnv = await loadMasterKey({ keyFile, env });
    expect(fromEnv).toMatchObject({ source: 'env', keyId: masterKeyId(envKey) });
    expect(fromEnv.key).toEqual(envKey);
    expect(existsSync(keyFile)).toBe(false);

    const fileKey = (await loadMasterKey({ keyFile, env: {} })).key;
    expect(fileKey).not.toEqual(envKey);
    expect((await loadMasterKey({ keyFile, env })).key).toEqual(envKey);
    const cipher = await SecretCipher.load({ keyFile, env });
    expect(cipher.keyId).toBe(masterKeyId(envKey));
  });

  it('refuses an environment key that is not base64 of 32 bytes, clearly', async () => {
    for (const bad of [
      randomBytes(16).toString('base64'),
      'not base64 at all!',
      randomBytes(33).toString('base64'),
    ]) {
      const err = await loadMasterKey({ keyFile, env: { [MASTER_KEY_ENV]: bad } }).catch(
        (e: unknown) => e,
      );
      expect(isGatehouseError(err, 'INVALID_INPUT')).toBe(true);
      expect((err as Error).message).toContain(
        `${MASTER_KEY_ENV} must be the base64 of exactly 32 bytes`,
      );
      expect((err as Error).message).not.toContain(bad);
    }
    expect(existsSync(keyFile)).toBe(false);
  });

  it('accepts a key file of base64 text, and refuses one of the wrong length or open to others', async () => {
    await loadMasterKey({ keyFile, env: {} });
    const key = randomBytes(32);
    writeFileSync(keyFile, `${key.toString('base64')}\n`, { mode: 0o600 });
    expect((await loadMasterKey({ keyFile, env: {} })).key).toEqual(key);

    writeFileSync(keyFile, randomBytes(31));
    await expect(loadMasterKey({ keyFile, env: {} })).rejects.toThrow(/must hold exactly 32 bytes/);

    writeFileSync(keyFile, key);
    chmodSync(keyFile, 0o644);
    await expect(loadMasterKey({ keyFile, env: {} })).rejects.toThrow(
      /readable by others.*chmod 600/,
    );
  });
});
