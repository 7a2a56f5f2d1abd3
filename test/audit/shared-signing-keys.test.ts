import { randomBytes } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import { SharedSigningKeyring, verifyWithJwks } from '../../src/audit/index.js';
import { keySealer } from '../../src/app/open-keyring.js';
import { ManualClock, isGatehouseError } from '../../src/core/index.js';
import { SecretCipher } from '../../src/secrets/index.js';
import { PostgresDatabase } from '../../src/storage/postgres/postgres-database.js';
import { PostgresSigningKeyStore } from '../../src/storage/postgres/postgres-signing-key-store.js';
import { migratedPostgresDatabase, missingPostgres, queryPostgres } from '../helpers/postgres.js';
import { skipWithout } from '../helpers/prerequisites.js';

// The signing keys of several nodes of one PostgreSQL database: each "node" here is a pool and a
// keyring of its own on the same database, as separate processes would have.

const clock = new ManualClock(Date.UTC(2026, 0, 1));
const data = Buffer.from('the bytes to sign');
const opened: { close(): unknown }[] = [];

afterEach(async () => {
  for (const o of opened.splice(0).reverse()) await o.close();
});

async function node(url: string, master: Buffer): Promise<SharedSigningKeyring> {
  const db = await PostgresDatabase.open({ url, poolSize: 2 });
  opened.push(db);
  const ring = await SharedSigningKeyring.open({
    store: new PostgresSigningKeyStore(db),
    sealer: keySealer(SecretCipher.fromKey(master)),
    clock,
    refreshMs: 0,
  });
  opened.push(ring);
  return ring;
}

describe.skipIf(skipWithout('PostgreSQL', missingPostgres()))('SharedSigningKeyring', () => {
  it('gives nodes started together one key, which verifies what any of them signs', async () => {
    const url = await migratedPostgresDatabase('keys');
    const master = randomBytes(32);
    const nodes = await Promise.all([node(url, master), node(url, master), node(url, master)]);
    expect(new Set(nodes.map((n) => n.activeKeyId)).size).toBe(1);
    for (const n of nodes) {
      const { keyid, sig } = n.sign(data);
      for (const other of nodes) expect(verifyWithJwks(other.jwks(), keyid, data, sig)).toBe(true);
    }
  });

  it('keeps only the sealed private key in the database, never the plain one', async () => {
    const url = await migratedPostgresDatabase('keys');
    const ring = await node(url, randomBytes(32));
    const rows = await queryPostgres<{ sealed: string }>(url, 'select sealed from signing_keys');
    expect(rows).toHaveLength(1);
    expect(rows[0]!.sealed).not.toMatch(/PRIVATE KEY/);
    expect(typeof (JSON.parse(rows[0]!.sealed) as { keyId: unknown }).keyId).toBe('string');
    expect(ring.jwks().keys).toHaveLength(1);
  });

  it('rotates for every node: the others sign with the new key once refreshed, old signatures still verify', async () => {
    const url = await migratedPostgresDatabase('keys');
    const master = randomBytes(32);
    const a = await node(url, master);
    const b = await node(url, master);
    const old = a.activeKeyId;
    const signedBefore = b.sign(data);
    clock.advance(1000);
    await a.rotate();
    expect(a.activeKeyId).not.toBe(old);
    await b.refresh();
    expect(b.activeKeyId).toBe(a.activeKeyId);
    expect(b.jwks().keys.map((k) => k.kid)).toEqual([old, a.activeKeyId]);
    const signedAfter = b.sign(data);
    expect(signedAfter.keyid).toBe(a.activeKeyId);
    for (const s of [signedBefore, signedAfter])
      expect(verifyWithJwks(a.jwks(), s.keyid, data, s.sig)).toBe(true);

    // The retired key's private half is gone from the database.
    const retired = await queryPostgres<{ kid: string; sealed: string | null }>(
      url,
      'select kid, sealed from signing_keys where retired_at is not null',
    );
    expect(retired).toEqual([{ kid: old, sealed: null }]);
  });

  it('lets two nodes rotating at once end with one active key', async () => {
    const url = await migratedPostgresDatabase('keys');
    const master = randomBytes(32);
    const a = await node(url, master);
    const b = await node(url, master);
    await Promise.all([a.rotate(), b.rotate()]);
    await a.refresh();
    await b.refresh();
    expect(a.activeKeyId).toBe(b.activeKeyId);
    expect(a.jwks()).toEqual(b.jwks());
    expect(a.jwks().keys.length).toBeGreaterThanOrEqual(2);
  });

  it('refuses to start a node whose master key is not the one that sealed the keys', async () => {
    const url = await migratedPostgresDatabase('keys');
    await node(url, randomBytes(32));
    const err: unknown = await node(url, randomBytes(32)).catch((e: unknown) => e);
    expect(isGatehouseError(err) && err.code).toBe('INVALID_INPUT');
    expect((err as Error).message).toMatch(
      /sealed with master key [0-9a-f]{16}, but this node's master key is [0-9a-f]{16}.*same master key/,
    );
  });
});
