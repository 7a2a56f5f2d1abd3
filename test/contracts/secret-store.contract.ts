import { describe, expect, it } from 'vitest';
import { isGatehouseError } from '../../src/core/index.js';
import type { AuditRecordDraft } from '../../src/core/index.js';
import type { AuditStore } from '../../src/audit/index.js';
import type { SecretStore, StoredSecret } from '../../src/secrets/index.js';

/** What a {@link secretStoreContract} test gets: the store, the audit log it writes to, a closer. */
export interface MadeSecretStore {
  store: SecretStore;
  /** The audit log the store appends to (the same database). */
  audit: AuditStore;
  close(): Promise<void>;
}

/**
 * The contract every {@link SecretStore} keeps. Registers a vitest suite named `name`; `make`
 * gives a fresh, empty store for each test.
 */
export function secretStoreContract(name: string, make: () => Promise<MadeSecretStore>): void {
  async function withStore(body: (made: MadeSecretStore) => Promise<void>): Promise<void> {
    const made = await make();
    try {
      await body(made);
    } finally {
      await made.close();
    }
  }

  const at = (s: number) => new Date(Date.UTC(2026, 0, 1, 0, 0, s)).toISOString();

  const secret = (over: Partial<StoredSecret> = {}): StoredSecret => ({
    tenant: 'acme',
    name: 'github-token',
    version: 1,
    scopes: ['github:read', 'github:write'],
    createdAt: at(0),
    sealed: {
      ciphertext: 'Y2lwaGVy',
      iv: 'aXZpdml2aXZpdml2',
      tag: 'dGFndGFn',
      keyId: '0123456789abcdef',
    },
    ...over,
  });
  const audit = (s: { tenant: string; name: string }, type = 'secret.put'): AuditRecordDraft => ({
    tenant: s.tenant,
    type,
    subject: `secret/${s.name}`,
    at: at(0),
    actor: 'admin-1',
    data: { name: s.name },
  });
  const auditTypes = async (made: MadeSecretStore, tenant = 'acme') => {
    const size = await made.audit.size(tenant);
    return (await made.audit.records(tenant, 0, size)).map(
      (r) => (JSON.parse(r.record) as { type: string }).type,
    );
  };
  const rejection = (p: Promise<unknown>) =>
    p.then(
      () => undefined,
      (e: unknown) => e,
    );

  describe(`SecretStore contract: ${name}`, () => {
    it('gives back the newest version as put, with its audit record', () =>
      withStore(async (made) => {
        const v1 = secret();
        const v2 = secret({ version: 2, scopes: ['github:read'], createdAt: at(5) });
        await made.store.put(v1, audit(v1));
        await made.store.put(v2, audit(v2, 'secret.rotated'));
        expect(await made.store.latest('acme', 'github-token')).toEqual(v2);
        expect(await made.store.topVersion('acme', 'github-token')).toBe(2);
        expect(await auditTypes(made)).toEqual(['secret.put', 'secret.rotated']);
      }));

    it('has nothing for a name never written', () =>
      withStore(async (made) => {
        expect(await made.store.latest('acme', 'nope')).toBeUndefined();
        expect(await made.store.topVersion('acme', 'nope')).toBe(0);
        expect(await made.store.list('acme')).toEqual([]);
      }));

    it('refuses a version that does not follow the stored one, writing nothing', () =>
      withStore(async (made) => {
        await made.store.put(secret(), audit(secret()));
        for (const version of [1, 3]) {
          const err = await rejection(made.store.put(secret({ version }), audit(secret())));
          expect(isGatehouseError(err, 'CONFLICT')).toBe(true);
        }
        const first = secret({ name: 'other', version: 2 });
        expect(
          isGatehouseError(await rejection(made.store.put(first, audit(first))), 'CONFLICT'),
        ).toBe(true);
        expect(await made.store.topVersion('acme', 'github-token')).toBe(1);
        expect(await made.store.latest('acme', 'other')).toBeUndefined();
        expect(await auditTypes(made)).toEqual(['secret.put']);
      }));

    it('refuses a rotation of a version that is no longer the newest live one', () =>
      withStore(async (made) => {
        await made.store.put(secret(), audit(secret()));
        await made.store.put(secret({ version: 2 }), audit(secret()));
        const stale = rejection(
          made.store.put(secret({ version: 3 }), audit(secret()), { replaces: 1 }),
        );
        expect(isGatehouseError(await stale, 'CONFLICT')).toBe(true);
        await made.store.put(secret({ version: 3 }), audit(secret()), { replaces: 2 });
        await made.store.delete('acme', 'github-token', at(9), audit(secret(), 'secret.deleted'));
        const revived = rejection(
          made.store.put(secret({ version: 4 }), audit(secret()), { replaces: 3 }),
        );
        expect(isGatehouseError(await revived, 'CONFLICT')).toBe(true);
        expect(await made.store.latest('acme', 'github-token')).toBeUndefined();
      }));

    it('lists the newest live version of each name, metadata only, by name', () =>
      withStore(async (made) => {
        const rows = [
          secret({ name: 'zeta' }),
          secret({ name: 'alpha' }),
          secret({ name: 'alpha', version: 2, scopes: ['x'], createdAt: at(3) }),
          secret({ name: 'gone' }),
          secret({ tenant: 'globex', name: 'theirs' }),
        ];
        for (const r of rows) await made.store.put(r, audit(r));
        await made.store.delete('acme', 'gone', at(4), audit(secret({ name: 'gone' })));
        const list = await made.store.list('acme');
        expect(list).toEqual([
          { name: 'alpha', version: 2, scopes: ['x'], createdAt: at(3) },
          { name: 'zeta', version: 1, scopes: ['github:read', 'github:write'], createdAt: at(0) },
        ]);
        expect(JSON.stringify(list)).not.toContain('Y2lwaGVy');
        expect((await made.store.list('globex')).map((s) => s.name)).toEqual(['theirs']);
      }));

    it('deletes every version; a later put starts a new version; a repeat changes nothing', () =>
      withStore(async (made) => {
        await made.store.put(secret(), audit(secret()));
        await made.store.put(secret({ version: 2 }), audit(secret()));
        expect(
          await made.store.delete('acme', 'github-token', at(7), audit(secret(), 'secret.deleted')),
        ).toBe(true);
        expect(await made.store.latest('acme', 'github-token')).toBeUndefined();
        expect(await made.store.topVersion('acme', 'github-token')).toBe(2);
        expect(
          await made.store.delete('acme', 'github-token', at(8), audit(secret(), 'secret.deleted')),
        ).toBe(false);
        expect(await auditTypes(made)).toEqual(['secret.put', 'secret.put', 'secret.deleted']);
        const v3 = secret({ version: 3, scopes: ['new'] });
        await made.store.put(v3, audit(v3));
        expect(await made.store.latest('acme', 'github-token')).toEqual(v3);
      }));

    it('keeps tenants apart', () =>
      withStore(async (made) => {
        const ours = secret();
        const theirs = secret({ tenant: 'globex', scopes: ['other'] });
        await made.store.put(ours, audit(ours));
        await made.store.put(theirs, audit(theirs));
        expect(await made.store.delete('globex', 'github-token', at(1), audit(theirs))).toBe(true);
        expect(await made.store.latest('acme', 'github-token')).toEqual(ours);
        expect(await made.store.latest('globex', 'github-token')).toBeUndefined();
      }));

    it('appends audit records on their own, in order, and nothing for an empty list', () =>
      withStore(async (made) => {
        await made.store.appendAudit([]);
        await made.store.appendAudit([
          audit(secret(), 'credential.issued'),
          audit(secret(), 'credential.revoked'),
        ]);
        expect(await auditTypes(made)).toEqual(['credential.issued', 'credential.revoked']);
      }));
  });
}
