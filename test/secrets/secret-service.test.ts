import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ManualClock, isGatehouseError } from '../../src/core/index.js';
import { SecretCipher, SecretService } from '../../src/secrets/index.js';
import { SqliteAuditStore } from '../../src/storage/sqlite/sqlite-audit-store.js';
import { SqliteDatabase } from '../../src/storage/sqlite/sqlite-database.js';
import { SqliteSecretStore } from '../../src/storage/sqlite/sqlite-secret-store.js';

describe('SecretService', () => {
  let dir: string;
  let db: SqliteDatabase;
  let store: SqliteSecretStore;
  let service: SecretService;
  const cipher = SecretCipher.fromKey(randomBytes(32));
  const clock = new ManualClock();

  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), 'gatehouse-secret-service-'));
    db = await SqliteDatabase.open({ file: join(dir, 'g.db') });
    store = new SqliteSecretStore(db);
    service = new SecretService({ store, cipher, clock });
  });
  afterEach(async () => {
    await db.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const codeOf = (p: Promise<unknown>) =>
    p.then(
      () => 'resolved',
      (e: unknown) => (isGatehouseError(e) ? e.code : String(e)),
    );
  const auditRecords = async () => {
    const audit = new SqliteAuditStore(db);
    return (await audit.records('acme', 0, await audit.size('acme'))).map(
      (r) => JSON.parse(r.record) as { type: string; actor: string; data: Record<string, unknown> },
    );
  };

  it('puts a sealed version with sorted, distinct scopes, and lists metadata only', async () => {
    const meta = await service.put(
      'acme',
      'github-token',
      'ghp_secret',
      ['b', 'a', 'b'],
      'admin-1',
    );
    expect(meta).toEqual({
      name: 'github-token',
      version: 1,
      scopes: ['a', 'b'],
      createdAt: '2026-01-01T00:00:00.000Z',
    });
    expect(await service.list('acme')).toEqual([meta]);
    expect(await service.list('globex')).toEqual([]);
    const stored = (await store.latest('acme', 'github-token'))!;
    expect(stored.sealed.keyId).toBe(cipher.keyId);
    expect(cipher.unseal(stored, stored.sealed)).toBe('ghp_secret');
  });

  it('has no method that returns a value', () => {
    const methods = Object.getOwnPropertyNames(SecretService.prototype).filter(
      (m) => m !== 'constructor',
    );
    expect(methods.sort()).toEqual(['delete', 'list', 'put', 'rotate', 'write']);
  });

  it('rotates to a new version keeping the scopes', async () => {
    await service.put('acme', 'token', 'v1', ['deploy'], 'admin-1');
    clock.advance(1000);
    const rotated = await service.rotate('acme', 'token', 'v2', 'admin-2');
    expect(rotated).toMatchObject({ version: 2, scopes: ['deploy'] });
    const stored = (await store.latest('acme', 'token'))!;
    expect(cipher.unseal(stored, stored.sealed)).toBe('v2');
  });

  it('refuses to rotate a secret that does not exist or was deleted (NOT_FOUND)', async () => {
    expect(await codeOf(service.rotate('acme', 'nope', 'v', 'admin-1'))).toBe('NOT_FOUND');
    await service.put('acme', 'token', 'v1', ['deploy'], 'admin-1');
    await service.delete('acme', 'token', 'admin-1');
    expect(await codeOf(service.rotate('acme', 'token', 'v2', 'admin-1'))).toBe('NOT_FOUND');
  });

  it('deletes every version; a repeat is NOT_FOUND; a later put starts a new version', async () => {
    await service.put('acme', 'token', 'v1', ['deploy'], 'admin-1');
    await service.rotate('acme', 'token', 'v2', 'admin-1');
    await service.delete('acme', 'token', 'admin-1');
    expect(await service.list('acme')).toEqual([]);
    expect(await codeOf(service.delete('acme', 'token', 'admin-1'))).toBe('NOT_FOUND');
    expect((await service.put('acme', 'token', 'v3', ['x'], 'admin-1')).version).toBe(3);
  });

  it('audits put, rotate and delete with name, version, scopes and key id, never the value', async () => {
    const value = 'sk-live-0123456789abcdef';
    await service.put('acme', 'token', value, ['deploy'], 'admin-1');
    await service.rotate('acme', 'token', `${value}-2`, 'admin-2');
    await service.delete('acme', 'token', 'admin-3');
    const records = await auditRecords();
    expect(records.map((r) => [r.type, r.actor])).toEqual([
      ['secret.put', 'admin-1'],
      ['secret.rotated', 'admin-2'],
      ['secret.deleted', 'admin-3'],
    ]);
    expect(records[0]!.data).toEqual({
      name: 'token',
      version: 1,
      scopes: ['deploy'],
      keyId: cipher.keyId,
    });
    const all = db.raw.prepare('SELECT record FROM audit_records').all() as { record: string }[];
    const text = all.map((r) => r.record).join('\n');
    for (const form of [
      value,
      Buffer.from(value).toString('base64'),
      Buffer.from(value).toString('hex'),
    ])
      expect(text).not.toContain(form);
  });

  it.each([
    ['an upper-case name', 'Token', 'v', ['s']],
    ['a name starting with a dot', '.token', 'v', ['s']],
    ['a name with a slash', 'a/b', 'v', ['s']],
    ['a 64-character name', 'a'.repeat(64), 'v', ['s']],
    ['an empty value', 'token', '', ['s']],
    ['a value over 64 KiB', 'token', 'é'.repeat(32 * 1024 + 1), ['s']],
    ['no scopes', 'token', 'v', []],
    ['a scope with a space', 'token', 'v', ['a b']],
    ['an empty scope', 'token', 'v', ['']],
    ['scopes that are not a list', 'token', 'v', 'deploy' as unknown as string[]],
    ['a scope that is not a string', 'token', 'v', [1] as unknown as string[]],
  ])('refuses %s with INVALID_INPUT, storing nothing', async (_what, name, value, scopes) => {
    expect(await codeOf(service.put('acme', name, value, scopes, 'admin-1'))).toBe('INVALID_INPUT');
    expect(await service.list('acme')).toEqual([]);
    expect(await auditRecords()).toEqual([]);
  });

  it('accepts a 63-character name and a value of exactly 64 KiB', async () => {
    const meta = await service.put(
      'acme',
      `a${'.-_9'.repeat(15)}xy`,
      'x'.repeat(64 * 1024),
      ['s'],
      'a',
    );
    expect(meta.version).toBe(1);
  });

  it('refuses a bad value on rotate and a bad name on delete', async () => {
    await service.put('acme', 'token', 'v1', ['deploy'], 'admin-1');
    expect(await codeOf(service.rotate('acme', 'token', '', 'admin-1'))).toBe('INVALID_INPUT');
    expect(await codeOf(service.delete('acme', 'TOKEN', 'admin-1'))).toBe('INVALID_INPUT');
  });
});
