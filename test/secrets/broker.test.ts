import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ManualClock, SequentialIds, isGatehouseError } from '../../src/core/index.js';
import type { AuditRecordDraft } from '../../src/core/index.js';
import {
  CredentialBroker,
  SecretCipher,
  SecretService,
  credentialNeedProblems,
  credentialNeedsSchema,
} from '../../src/secrets/index.js';
import type { CredentialNeed, SecretStore } from '../../src/secrets/index.js';
import { SqliteDatabase } from '../../src/storage/sqlite/sqlite-database.js';
import { SqliteSecretStore } from '../../src/storage/sqlite/sqlite-secret-store.js';

const TOKEN = 'ghp_0123456789abcdefSECRET';
const API_KEY = 'sk-$&-$1-api-key-VALUE';

describe('CredentialBroker', () => {
  let dir: string;
  let db: SqliteDatabase;
  let store: SecretStore;
  let secrets: SecretService;
  let broker: CredentialBroker;
  let clock: ManualClock;
  const cipher = SecretCipher.fromKey(randomBytes(32));

  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), 'gatehouse-broker-'));
    db = await SqliteDatabase.open({ file: join(dir, 'g.db') });
    store = new SqliteSecretStore(db);
    clock = new ManualClock();
    secrets = new SecretService({ store, cipher, clock });
    broker = new CredentialBroker({ store, cipher, clock, ids: new SequentialIds('lease') });
    await secrets.put('acme', 'github-token', TOKEN, ['github:read', 'github:write'], 'admin-1');
    await secrets.put('acme', 'api-key', API_KEY, ['api'], 'admin-1');
    await secrets.put('acme', 'spare', 'spare-value', ['spare'], 'admin-1');
  });
  afterEach(async () => {
    await db.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const auditRecords = () =>
    (
      db.raw
        .prepare("SELECT record FROM audit_records WHERE tenant = 'acme' ORDER BY idx")
        .all() as {
        record: string;
      }[]
    ).map((r) => JSON.parse(r.record) as AuditRecordDraft);
  const failure = (p: Promise<unknown>) =>
    p.then(
      () => {
        throw new Error('expected a refusal');
      },
      (e: unknown) => {
        if (!isGatehouseError(e)) throw e;
        return e;
      },
    );

  it('injects into env, file and header, with values for the sanitizer and leases without them', async () => {
    const needs: CredentialNeed[] = [
      { ref: 'github-token', scope: 'github:read', inject: { env: 'GITHUB_TOKEN' } },
      { ref: 'github-token', scope: 'github:read', inject: { file: '/run/secrets/github' } },
      {
        ref: 'api-key',
        scope: 'api',
        inject: { header: 'Authorization', format: 'Bearer {value}', host: 'api.example.com' },
      },
      { ref: 'api-key', scope: 'api', inject: { header: 'X-Api-Key' } },
    ];
    const issued = await broker.issue('acme', 'inv-1', needs, 30_000);
    expect(issued.env).toEqual({ GITHUB_TOKEN: TOKEN });
    expect(issued.files).toEqual([{ path: '/run/secrets/github', content: TOKEN, mode: 0o400 }]);
    expect(issued.headers).toEqual([
      // `$&` and `$1` in the value stay literal.
      // A host alone binds the header to https on 443 of that host.
      {
        origin: 'https://api.example.com:443',
        name: 'Authorization',
        value: `Bearer ${API_KEY}`,
      },
      { name: 'X-Api-Key', value: API_KEY },
    ]);
    expect(issued.values).toEqual([
      { name: 'github-token', value: TOKEN },
      { name: 'api-key', value: API_KEY },
    ]);
    expect(issued.leases).toEqual(
      ['github-token', 'github-token', 'api-key', 'api-key'].map((ref, i) => ({
        id: `lease-0000000${i + 1}`,
        ref,
        scope: ref === 'api-key' ? 'api' : 'github:read',
        version: 1,
        expiresAt: '2026-01-01T00:00:30.000Z',
      })),
    );
    expect(JSON.stringify(issued.leases)).not.toContain(TOKEN);
  });

  it('issues the newest version after a rotation', async () => {
    await secrets.rotate('acme', 'github-token', 'rotated-value', 'admin-1');
    const issued = await broker.issue(
      'acme',
      'inv-1',
      [{ ref: 'github-token', scope: 'github:read', inject: { env: 'T' } }],
      1000,
    );
    expect(issued.env.T).toBe('rotated-value');
    expect(issued.leases[0]!.version).toBe(2);
  });

  it('issues nothing for no needs', async () => {
    expect(await broker.issue('acme', 'inv-1', [], 1000)).toEqual({
      env: {},
      files: [],
      headers: [],
      values: [],
      leases: [],
    });
    expect(auditRecords().filter((r) => r.type.startsWith('credential.'))).toEqual([]);
  });

  it('ends leases after their TTL and refuses a later issue for that invocation', async () => {
    const need: CredentialNeed = {
      ref: 'github-token',
      scope: 'github:read',
      inject: { env: 'T' },
    };
    const issued = await broker.issue('acme', 'inv-1', [need], 5_000);
    const lease = issued.leases[0]!.id;
    clock.advance(4_999);
    expect(broker.isLive(lease)).toBe(true);
    clock.advance(1);
    expect(broker.isLive(lease)).toBe(false);
    const err = await failure(broker.issue('acme', 'inv-1', [need], 5_000));
    expect(err.code).toBe('CREDENTIAL_LEASE_ENDED');
    expect(err.message).toContain('inv-1');
    expect(auditRecords().at(-1)).toMatchObject({
      type: 'credential.revoked',
      data: { invocationId: 'inv-1', leases: [lease], reason: 'expired' },
    });
  });

  it('hands the issue and end records to a caller that writes them with its own commit', async () => {
    const needs: CredentialNeed[] = [
      { ref: 'api-key', scope: 'api', inject: { header: 'X-Api-Key' } },
    ];
    const before = auditRecords().length;
    const { issued, audit } = await broker.issueRecorded('acme', 'inv-rec', needs, 30_000);
    expect(audit).toMatchObject({ type: 'credential.issued', subject: 'invocation/inv-rec' });
    expect(JSON.stringify(audit)).not.toContain(API_KEY);
    expect(broker.isLive(issued.leases[0]!.id)).toBe(true);
    const ended = broker.end('inv-rec', 'completed');
    expect(ended).toMatchObject({
      type: 'credential.revoked',
      data: { invocationId: 'inv-rec', leases: [issued.leases[0]!.id], reason: 'completed' },
    });
    expect(broker.isLive(issued.leases[0]!.id)).toBe(false);
    // Nothing was written: both records are the caller's; a second end has nothing to record.
    expect(auditRecords()).toHaveLength(before);
    expect(broker.end('inv-rec')).toBeUndefined();
    await expect(broker.issueRecorded('acme', 'inv-rec', needs, 30_000)).rejects.toMatchObject({
      code: 'CREDENTIAL_LEASE_ENDED',
    });
  });

  it('revokes expired leases for the reaper, once', async () => {
    const need: CredentialNeed = {
      ref: 'github-token',
      scope: 'github:read',
      inject: { env: 'T' },
    };
    await broker.issue('acme', 'inv-short', [need], 1_000);
    await broker.issue('acme', 'inv-long', [need], 60_000);
    clock.advance(1_000);
    expect(await broker.revokeExpired()).toEqual(['inv-short']);
    expect(await broker.revokeExpired()).toEqual([]);
  });

  it.each([0, -1, Number.NaN, Number.POSITIVE_INFINITY])(
    'refuses a TTL of %s with CREDENTIAL_LEASE_ENDED',
    async (ttl) => {
      const err = await failure(
        broker.issue(
          'acme',
          'inv-1',
          [{ ref: 'github-token', scope: 'github:read', inject: { env: 'T' } }],
          ttl,
        ),
      );
      expect(err.code).toBe('CREDENTIAL_LEASE_ENDED');
    },
  );

  it('revokes: leases end, the revocation is audited, a repeat changes nothing, a later issue is refused', async () => {
    const need: CredentialNeed = {
      ref: 'github-token',
      scope: 'github:read',
      inject: { env: 'T' },
    };
    const issued = await broker.issue('acme', 'inv-1', [need], 30_000);
    await broker.revoke('inv-1', 'completed');
    await broker.revoke('inv-1', 'completed');
    expect(broker.isLive(issued.leases[0]!.id)).toBe(false);
    const types = auditRecords().map((r) => r.type);
    expect(types.filter((t) => t === 'credential.revoked')).toHaveLength(1);
    expect(auditRecords().at(-1)).toMatchObject({
      type: 'credential.revoked',
      subject: 'invocation/inv-1',
      data: { leases: [issued.leases[0]!.id], reason: 'completed' },
    });
    expect((await failure(broker.issue('acme', 'inv-1', [need], 30_000))).code).toBe(
      'CREDENTIAL_LEASE_ENDED',
    );
    // Revoking an invocation that never had leases also closes it.
    await broker.revoke('inv-2');
    expect((await failure(broker.issue('acme', 'inv-2', [need], 30_000))).code).toBe(
      'CREDENTIAL_LEASE_ENDED',
    );
  });

  it('refuses leases when the invocation is revoked while they are being issued', async () => {
    const need: CredentialNeed = {
      ref: 'github-token',
      scope: 'github:read',
      inject: { env: 'T' },
    };
    const pending = failure(broker.issue('acme', 'inv-1', [need], 30_000));
    await broker.revoke('inv-1');
    expect((await pending).code).toBe('CREDENTIAL_LEASE_ENDED');
  });

  describe('fails closed, issuing nothing, naming the ref and never the value', () => {
    const expectRefusal = async (
      needs: CredentialNeed[],
      code: string,
      reason: RegExp,
      tenant = 'acme',
    ) => {
      const before = auditRecords().length;
      const err = await failure(broker.issue(tenant, 'inv-1', needs, 30_000));
      expect(err.code).toBe(code);
      expect(err.message).toMatch(reason);
      expect(err.message).not.toContain(TOKEN);
      expect(JSON.stringify(err.details)).not.toContain(TOKEN);
      expect(auditRecords()).toHaveLength(before);
      // Nothing was issued: a later, sound issue for the same invocation still works.
      await broker.issue(
        'acme',
        'inv-1',
        [{ ref: 'spare', scope: 'spare', inject: { env: 'SPARE' } }],
        1000,
      );
    };
    const good: CredentialNeed = { ref: 'api-key', scope: 'api', inject: { env: 'API_KEY' } };

    it('a missing secret: CREDENTIAL_UNAVAILABLE', () =>
      expectRefusal(
        [good, { ref: 'nope', scope: 'x', inject: { env: 'T' } }],
        'CREDENTIAL_UNAVAILABLE',
        /Credential nope cannot be issued: no secret named nope exists/,
      ));

    it("another tenant's secret: CREDENTIAL_UNAVAILABLE", () =>
      expectRefusal(
        [{ ref: 'github-token', scope: 'github:read', inject: { env: 'T' } }],
        'CREDENTIAL_UNAVAILABLE',
        /no secret named github-token/,
        'globex',
      ));

    it('a deleted secret: CREDENTIAL_UNAVAILABLE', async () => {
      await secrets.delete('acme', 'github-token', 'admin-1');
      await expectRefusal(
        [{ ref: 'github-token', scope: 'github:read', inject: { env: 'T' } }],
        'CREDENTIAL_UNAVAILABLE',
        /Credential github-token cannot be issued: secret github-token was deleted/,
      );
    });

    it('a scope the secret does not grant: CREDENTIAL_SCOPE_DENIED', () =>
      expectRefusal(
        [good, { ref: 'github-token', scope: 'github:admin', inject: { env: 'T' } }],
        'CREDENTIAL_SCOPE_DENIED',
        /Credential github-token cannot be issued: .*does not grant scope github:admin/,
      ));

    it('a secret sealed under another master key: CREDENTIAL_UNAVAILABLE naming both key ids', async () => {
      const other = SecretCipher.fromKey(randomBytes(32));
      await new SecretService({ store, cipher: other, clock }).rotate(
        'acme',
        'github-token',
        TOKEN,
        'admin-1',
      );
      await expectRefusal(
        [{ ref: 'github-token', scope: 'github:read', inject: { env: 'T' } }],
        'CREDENTIAL_UNAVAILABLE',
        new RegExp(`github-token.*sealed with master key ${other.keyId}.*is ${cipher.keyId}`),
      );
    });

    it('a ciphertext moved from another secret: CREDENTIAL_UNAVAILABLE', async () => {
      db.raw
        .prepare(
          `UPDATE secrets SET (ciphertext, iv, tag) =
             (SELECT ciphertext, iv, tag FROM secrets WHERE name = 'github-token')
           WHERE name = 'api-key'`,
        )
        .run();
      await expectRefusal(
        [{ ref: 'api-key', scope: 'api', inject: { env: 'K' } }],
        'CREDENTIAL_UNAVAILABLE',
        /Credential api-key cannot be issued: .*does not decrypt/,
      );
    });

    it('a value a header cannot carry: CREDENTIAL_UNAVAILABLE', async () => {
      await secrets.put('acme', 'multiline', 'line1\r\nX-Evil: 1', ['h'], 'admin-1');
      await expectRefusal(
        [{ ref: 'multiline', scope: 'h', inject: { header: 'Authorization' } }],
        'CREDENTIAL_UNAVAILABLE',
        /Credential multiline cannot be issued: .*cannot carry/,
      );
    });

    it('two needs injecting into one place: INVALID_DESCRIPTOR', () =>
      expectRefusal(
        [good, { ref: 'github-token', scope: 'github:read', inject: { env: 'API_KEY' } }],
        'INVALID_DESCRIPTOR',
        /credentials\/1 injects into env:API_KEY, as credentials\/0 already does/,
      ));
  });

  it('never writes a value into the audit log', async () => {
    await broker.issue(
      'acme',
      'inv-1',
      [
        { ref: 'github-token', scope: 'github:write', inject: { env: 'GITHUB_TOKEN' } },
        {
          ref: 'api-key',
          scope: 'api',
          inject: { header: 'Authorization', format: 'Bearer {value}' },
        },
      ],
      30_000,
    );
    await broker.revoke('inv-1');
    const records = auditRecords();
    expect(records.map((r) => r.type)).toEqual([
      'secret.put',
      'secret.put',
      'secret.put',
      'credential.issued',
      'credential.revoked',
    ]);
    expect(records[3]).toMatchObject({
      subject: 'invocation/inv-1',
      actor: 'system',
      data: {
        invocationId: 'inv-1',
        leases: [
          { ref: 'github-token', scope: 'github:write', version: 1, target: 'env:GITHUB_TOKEN' },
          { ref: 'api-key', scope: 'api', version: 1, target: 'header:authorization@*' },
        ],
      },
    });
    const text = (db.raw.prepare('SELECT record FROM audit_records').all() as { record: string }[])
      .map((r) => r.record)
      .join('\n');
    for (const value of [TOKEN, API_KEY]) {
      for (const form of [
        value,
        Buffer.from(value).toString('base64'),
        Buffer.from(value).toString('hex'),
        encodeURIComponent(value),
      ])
        expect(text).not.toContain(form);
    }
  });
});

describe('credentialNeedsSchema', () => {
  const validate = new Ajv2020({ strict: false }).compile(credentialNeedsSchema);

  it('accepts the three injections', () => {
    expect(
      validate([
        { ref: 'github-token', scope: 'github:read', inject: { env: 'GITHUB_TOKEN' } },
        { ref: 'github-token', scope: 'github:read', inject: { file: '/run/secrets/github' } },
        {
          ref: 'api-key',
          scope: 'api',
          inject: { header: 'Authorization', format: 'Bearer {value}', host: 'api.example.com' },
        },
      ]),
    ).toBe(true);
  });

  it.each([
    ['a bad ref', { ref: 'Bad', scope: 's', inject: { env: 'T' } }],
    ['no scope', { ref: 'a', inject: { env: 'T' } }],
    [
      'two injections at once',
      { ref: 'a', scope: 's', inject: { env: 'T', file: '/run/secrets/a' } },
    ],
    ['a lower-case variable', { ref: 'a', scope: 's', inject: { env: 'token' } }],
    ['PATH', { ref: 'a', scope: 's', inject: { env: 'PATH' } }],
    ['LD_PRELOAD', { ref: 'a', scope: 's', inject: { env: 'LD_PRELOAD' } }],
    ['HTTPS_PROXY', { ref: 'a', scope: 's', inject: { env: 'HTTPS_PROXY' } }],
    ['a file outside /run/secrets', { ref: 'a', scope: 's', inject: { file: '/etc/passwd' } }],
    ['a file path escaping', { ref: 'a', scope: 's', inject: { file: '/run/secrets/../x' } }],
    [
      'a format without {value}',
      { ref: 'a', scope: 's', inject: { header: 'A', format: 'Bearer' } },
    ],
    [
      'a format with a line break',
      { ref: 'a', scope: 's', inject: { header: 'A', format: '{value}\n' } },
    ],
    ['a header with a colon', { ref: 'a', scope: 's', inject: { header: 'A:b' } }],
    ['a host with a port', { ref: 'a', scope: 's', inject: { header: 'A', host: 'a.com:443' } }],
    ['an unknown field', { ref: 'a', scope: 's', inject: { env: 'T' }, extra: 1 }],
    [
      'an origin with user info',
      { ref: 'a', scope: 's', inject: { header: 'A', origin: 'https://a.com@evil.test' } },
    ],
    [
      'an origin with a path',
      { ref: 'a', scope: 's', inject: { header: 'A', origin: 'https://a.com/v1' } },
    ],
    [
      'an origin of another scheme',
      { ref: 'a', scope: 's', inject: { header: 'A', origin: 'ftp://a.com' } },
    ],
  ])('refuses %s', (_what, need) => {
    expect(validate([need])).toBe(false);
  });

  it('binds a header to one exact origin: a host means https on 443, two spellings of one origin overlap', () => {
    expect(
      validate([
        { ref: 'a', scope: 's', inject: { header: 'A', origin: 'http://127.0.0.1:8080' } },
      ]),
    ).toBe(true);
    expect(
      credentialNeedProblems([
        { ref: 'a', scope: 's', inject: { header: 'A', host: 'a.com' } },
        { ref: 'b', scope: 's', inject: { header: 'A', origin: 'http://a.com' } },
        { ref: 'c', scope: 's', inject: { header: 'A', origin: 'https://A.com.:443/' } },
        { ref: 'd', scope: 's', inject: { header: 'B', host: 'a.com', origin: 'https://a.com' } },
        { ref: 'e', scope: 's', inject: { header: 'C', origin: 'https://a.com:99999' } },
      ]),
    ).toEqual([
      {
        pointer: '/credentials/2',
        message: 'injects into header:a@https://a.com:443, as credentials/0 already does',
      },
      { pointer: '/credentials/3', message: 'names both host and origin; give one' },
      {
        pointer: '/credentials/4',
        message:
          'names origin "https://a.com:99999", which is not an http(s) origin (http(s)://host[:port])',
      },
    ]);
  });

  it('leaves overlaps and framing headers to credentialNeedProblems', () => {
    expect(
      credentialNeedProblems([
        { ref: 'a', scope: 's', inject: { header: 'Authorization', host: 'a.com' } },
        { ref: 'b', scope: 's', inject: { header: 'authorization' } },
        { ref: 'c', scope: 's', inject: { header: 'Authorization', host: 'b.com' } },
        { ref: 'd', scope: 's', inject: { header: 'Host' } },
      ]),
    ).toEqual([
      {
        pointer: '/credentials/1',
        message: 'injects into header:authorization@*, as credentials/0 already does',
      },
      {
        pointer: '/credentials/2',
        message:
          'injects into header:authorization@https://b.com:443, as credentials/1 already does',
      },
      { pointer: '/credentials/3', message: 'may not set the Host header' },
    ]);
  });
});
