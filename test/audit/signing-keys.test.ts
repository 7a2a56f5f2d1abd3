import { createPublicKey, verify } from 'node:crypto';
import { mkdtemp, readFile, readdir, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { SigningKeyring, jwkThumbprint, verifyWithJwks } from '../../src/audit/index.js';
import type { PublishedKey } from '../../src/audit/index.js';
import { ManualClock, isGatehouseError } from '../../src/core/index.js';

let root: string;
let dir: string;
const clock = new ManualClock(Date.UTC(2026, 0, 1));

beforeEach(async () => {
  root = await mkdtemp(path.join(tmpdir(), 'gatehouse-keys-'));
  dir = path.join(root, 'keys');
});

afterEach(async () => {
  await rm(root, { recursive: true, force: true });
});

const data = Buffer.from('the bytes to sign');

describe('SigningKeyring', () => {
  it('creates a 0700 directory, a 0600 PKCS8 private key and the public key list', async () => {
    const ring = await SigningKeyring.open(dir, clock);
    expect((await stat(dir)).mode & 0o777).toBe(0o700);
    const keyFile = path.join(dir, `${ring.activeKeyId}.pem`);
    expect((await stat(keyFile)).mode & 0o777).toBe(0o600);
    expect(await readFile(keyFile, 'utf8')).toMatch(/^-----BEGIN PRIVATE KEY-----/);
    const listed = JSON.parse(
      await readFile(path.join(dir, 'public-keys.json'), 'utf8'),
    ) as PublishedKey[];
    expect(listed).toHaveLength(1);
    expect(listed[0]?.kid).toBe(ring.activeKeyId);
    expect(listed[0]?.createdAt).toBe('2026-01-01T00:00:00.000Z');
    expect(listed[0]?.retiredAt).toBeUndefined();
    // No temporary files left behind by the atomic writes.
    expect((await readdir(dir)).sort()).toEqual(
      [`${ring.activeKeyId}.pem`, 'public-keys.json'].sort(),
    );
  });

  it('uses the RFC 7638 thumbprint as kid', async () => {
    const ring = await SigningKeyring.open(dir, clock);
    const [jwk] = ring.jwks().keys;
    expect(jwk).toMatchObject({ kty: 'OKP', crv: 'Ed25519', alg: 'EdDSA', use: 'sig' });
    expect(jwk?.kid).toBe(ring.activeKeyId);
    expect(ring.activeKeyId).toMatch(/^[A-Za-z0-9_-]{43}$/);
    // RFC 8037 Appendix A.3: the thumbprint of its example Ed25519 key.
    expect(
      jwkThumbprint({
        crv: 'Ed25519',
        kty: 'OKP',
        x: '11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo',
      }),
    ).toBe('kPrK_qmxVWaYVA9wwBF6Iuo3vVzz7TxHCTwXBygrS4k');
  });

  it('keeps the same key when reopened', async () => {
    const first = await SigningKeyring.open(dir, clock);
    const again = await SigningKeyring.open(dir, clock);
    expect(again.activeKeyId).toBe(first.activeKeyId);
    const { keyid, sig } = again.sign(data);
    expect(verifyWithJwks(first.jwks(), keyid, data, sig)).toBe(true);
  });

  it('signs with Ed25519 so the JWK set verifies and a flipped bit fails', async () => {
    const ring = await SigningKeyring.open(dir, clock);
    const { keyid, sig } = ring.sign(data);
    expect(keyid).toBe(ring.activeKeyId);
    expect(sig).toHaveLength(64);
    const jwks = ring.jwks();
    const [jwk] = jwks.keys;
    // Independently of verifyWithJwks: node's own verifier with the published JWK.
    const pub = createPublicKey({ key: { kty: 'OKP', crv: 'Ed25519', x: jwk?.x }, format: 'jwk' });
    expect(verify(null, data, pub, sig)).toBe(true);
    expect(verifyWithJwks(jwks, keyid, data, sig)).toBe(true);
    const flipped = Buffer.from(sig);
    flipped[10] = (flipped[10] as number) ^ 0x01;
    expect(verifyWithJwks(jwks, keyid, data, flipped)).toBe(false);
    const otherData = Buffer.from(data);
    otherData[0] = (otherData[0] as number) ^ 0x80;
    expect(verifyWithJwks(jwks, keyid, otherData, sig)).toBe(false);
    expect(verifyWithJwks(jwks, 'no-such-kid', data, sig)).toBe(false);
  });

  it('rotates: new active key, old public key still published, old private key deleted', async () => {
    const ring = await SigningKeyring.open(dir, clock);
    const oldKid = ring.activeKeyId;
    const old = ring.sign(data);
    clock.advance(60_000);
    await ring.rotate();
    expect(ring.activeKeyId).not.toBe(oldKid);
    const fresh = ring.sign(data);
    expect(fresh.keyid).toBe(ring.activeKeyId);

    const jwks = ring.jwks();
    expect(jwks.keys.map((k) => k.kid)).toEqual([oldKid, ring.activeKeyId]);
    expect(verifyWithJwks(jwks, old.keyid, data, old.sig)).toBe(true);
    expect(verifyWithJwks(jwks, fresh.keyid, data, fresh.sig)).toBe(true);
    // A signature is bound to its key: the old signature under the new kid fails.
    expect(verifyWithJwks(jwks, fresh.keyid, data, old.sig)).toBe(false);

    expect((await readdir(dir)).sort()).toEqual(
      [`${ring.activeKeyId}.pem`, 'public-keys.json'].sort(),
    );
    const listed = JSON.parse(
      await readFile(path.join(dir, 'public-keys.json'), 'utf8'),
    ) as PublishedKey[];
    expect(listed[0]?.retiredAt).toBe('2026-01-01T00:01:00.000Z');
    expect(listed[1]?.createdAt).toBe('2026-01-01T00:01:00.000Z');

    const reopened = await SigningKeyring.open(dir, clock);
    expect(reopened.activeKeyId).toBe(ring.activeKeyId);
    expect(reopened.jwks()).toEqual(jwks);
  });

  it('runs concurrent rotations one after another', async () => {
    const ring = await SigningKeyring.open(dir, clock);
    await Promise.all([ring.rotate(), ring.rotate(), ring.rotate()]);
    const reopened = await SigningKeyring.open(dir, clock);
    expect(reopened.jwks().keys).toHaveLength(4);
    expect(reopened.activeKeyId).toBe(ring.activeKeyId);
  });

  it('refuses to open when the active private key is missing or belongs to another key', async () => {
    const ring = await SigningKeyring.open(dir, clock);
    const keyFile = path.join(dir, `${ring.activeKeyId}.pem`);
    const other = await SigningKeyring.open(path.join(root, 'other'), clock);
    await writeFile(keyFile, await readFile(path.join(root, 'other', `${other.activeKeyId}.pem`)));
    await expect(SigningKeyring.open(dir, clock)).rejects.toSatisfy(
      (err) =>
        isGatehouseError(err, 'INTERNAL') && /does not hold the Ed25519 key/.test(err.message),
    );
    await rm(keyFile);
    await expect(SigningKeyring.open(dir, clock)).rejects.toSatisfy(
      (err) => isGatehouseError(err, 'INTERNAL') && /restore it from backup/.test(err.message),
    );
  });

  it('refuses a public key list whose kid is not the thumbprint of its key', async () => {
    const ring = await SigningKeyring.open(dir, clock);
    const file = path.join(dir, 'public-keys.json');
    const listed = JSON.parse(await readFile(file, 'utf8')) as PublishedKey[];
    const tampered = [
      { ...listed[0], x: ring.jwks().keys[0]?.x.replace(/^./, (c) => (c === 'A' ? 'B' : 'A')) },
    ];
    await writeFile(file, JSON.stringify(tampered));
    await expect(SigningKeyring.open(dir, clock)).rejects.toSatisfy(
      (err) => isGatehouseError(err, 'INTERNAL') && /thumbprint as kid/.test(err.message),
    );
  });
});
