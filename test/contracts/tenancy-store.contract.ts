import { describe, expect, it } from 'vitest';
import type { Environment, LedgerEntries } from '../../src/core/index.js';
import type { AuditStore } from '../../src/audit/index.js';
import type {
  StoredPrincipal,
  StoredToken,
  TenancyStore,
  Tenant,
} from '../../src/tenancy/index.js';

/** What a {@link tenancyStoreContract} test gets: the store, the audit log it writes to, a closer. */
export interface MadeTenancyStore {
  store: TenancyStore;
  /** The audit log the store appends to (the same database). */
  audit: AuditStore;
  close(): Promise<void>;
}

/**
 * The contract every {@link TenancyStore} keeps. Registers a vitest suite named `name`; `make`
 * gives a fresh, empty store for each test.
 */
export function tenancyStoreContract(name: string, make: () => Promise<MadeTenancyStore>): void {
  async function withStore(body: (made: MadeTenancyStore) => Promise<void>): Promise<void> {
    const made = await make();
    try {
      await body(made);
    } finally {
      await made.close();
    }
  }

  const at = '2026-01-01T00:00:00.000Z';
  const ledger = (tenant: string, type: string): LedgerEntries => ({
    audit: [{ tenant, type, subject: type, at, actor: 'admin-1', data: {} }],
    events: [],
  });
  const tenant = (id: string): Tenant => ({ id, name: `Tenant ${id} — «ü»`, createdAt: at });
  const env = (over: Partial<Environment> = {}): Environment => ({
    tenant: 'acme',
    project: 'web',
    name: 'prod',
    class: 'production',
    frozen: false,
    ...over,
  });
  const principal = (over: Partial<StoredPrincipal> = {}): StoredPrincipal => ({
    id: 'p-1',
    tenant: 'acme',
    name: 'coder bot',
    roles: ['agent'],
    project: 'web',
    agent: { id: 'coder', version: '2.0.0' },
    createdAt: at,
    ...over,
  });
  const token = (over: Partial<StoredToken> = {}): StoredToken => ({
    id: 't-1',
    tenant: 'acme',
    principal: 'p-1',
    label: null,
    hash: '1'.repeat(64),
    createdAt: at,
    createdBy: 'admin-1',
    expiresAt: '2026-04-01T00:00:00.000Z',
    revokedAt: null,
    revokedBy: null,
    revokeReason: null,
    replacedBy: null,
    lastUsedAt: null,
    ...over,
  });
  const sortBy =
    <T>(key: (t: T) => string) =>
    (a: T, b: T) =>
      key(a).localeCompare(key(b));

  describe(`TenancyStore contract: ${name}`, () => {
    it('starts empty', () =>
      withStore(async ({ store }) => {
        expect(await store.loadAll()).toEqual({
          tenants: [],
          projects: [],
          environments: [],
          principals: [],
          tokens: [],
        });
      }));

    it('gives back everything it stored', () =>
      withStore(async ({ store }) => {
        await store.addTenant(tenant('acme'), ledger('acme', 'tenant.created'));
        await store.addTenant(tenant('globex'), ledger('globex', 'tenant.created'));
        await store.addProject({ tenant: 'acme', id: 'web', createdAt: at }, ledger('acme', 'p'));
        await store.addProject(
          { tenant: 'globex', id: 'web', createdAt: at },
          ledger('globex', 'p'),
        );
        const prod = env();
        const dev = env({ name: 'dev', class: 'development', frozen: true });
        await store.putEnvironment(prod, ledger('acme', 'e'));
        await store.putEnvironment(dev, ledger('acme', 'e'));
        const agent = principal();
        const admin = principal({
          id: 'p-2',
          name: 'Ada',
          roles: ['admin', 'reviewer'],
          project: null,
          agent: null,
        });
        const agentToken = token();
        const adminToken = token({
          id: 't-2',
          principal: 'p-2',
          hash: '2'.repeat(64),
          label: 'laptop',
        });
        await store.addPrincipal(agent, agentToken, ledger('acme', 'principal.created'));
        await store.addPrincipal(admin, adminToken, ledger('acme', 'principal.created'));

        const all = await store.loadAll();
        expect(all.tenants.sort(sortBy((t) => t.id))).toEqual([tenant('acme'), tenant('globex')]);
        expect(all.projects.sort(sortBy((p) => p.tenant))).toEqual([
          { tenant: 'acme', id: 'web' },
          { tenant: 'globex', id: 'web' },
        ]);
        expect(all.environments.sort(sortBy((e) => e.name))).toEqual([dev, prod]);
        expect(all.principals.sort(sortBy((p) => p.id))).toEqual([agent, admin]);
        expect(all.tokens.sort(sortBy((t) => t.id))).toEqual([agentToken, adminToken]);
      }));

    it('adds, revokes and rotates tokens, and keeps their last use', () =>
      withStore(async ({ store, audit }) => {
        await store.addPrincipal(principal(), token(), ledger('acme', 'principal.created'));
        const second = token({ id: 't-2', hash: '2'.repeat(64), label: 'ci' });
        await store.putTokens([second], ledger('acme', 'token.created'));
        const revoked = {
          ...second,
          revokedAt: '2026-01-02T00:00:00.000Z',
          revokedBy: 'admin-1',
          revokeReason: 'leaked',
        };
        const next = token({ id: 't-3', hash: '3'.repeat(64) });
        const rotated = {
          ...token(),
          revokedAt: '2026-01-03T00:00:00.000Z',
          revokedBy: 'p-1',
          revokeReason: 'rotated into t-3',
          replacedBy: 't-3',
        };
        await store.putTokens([revoked], ledger('acme', 'token.revoked'));
        await store.putTokens([rotated, next], ledger('acme', 'token.rotated'));
        await store.touchTokens([
          { id: 't-3', lastUsedAt: '2026-01-04T00:00:00.000Z' },
          { id: 'gone', lastUsedAt: '2026-01-04T00:00:00.000Z' },
        ]);
        const tokens = (await store.loadAll()).tokens.sort(sortBy((t) => t.id));
        expect(tokens).toEqual([
          rotated,
          revoked,
          { ...next, lastUsedAt: '2026-01-04T00:00:00.000Z' },
        ]);
        const types = (await audit.records('acme', 0, 10)).map(
          (r) => (JSON.parse(r.record) as { type: string }).type,
        );
        expect(types).toEqual([
          'principal.created',
          'token.created',
          'token.revoked',
          'token.rotated',
        ]);
      }));

    it('refuses a token whose hash exists, writing nothing', () =>
      withStore(async ({ store, audit }) => {
        await store.addPrincipal(principal(), token(), ledger('acme', 'principal.created'));
        await expect(
          store.putTokens([token({ id: 't-9' })], ledger('acme', 'token.created')),
        ).rejects.toThrow();
        expect((await store.loadAll()).tokens).toEqual([token()]);
        expect(await audit.size('acme')).toBe(1);
      }));

    it('appends each change to its tenant audit log', () =>
      withStore(async ({ store, audit }) => {
        await store.addTenant(tenant('acme'), ledger('acme', 'tenant.created'));
        await store.addProject({ tenant: 'acme', id: 'web', createdAt: at }, ledger('acme', 'p'));
        await store.putEnvironment(env(), ledger('acme', 'environment.put'));
        await store.addPrincipal(principal(), token(), ledger('acme', 'principal.created'));
        const records = await audit.records('acme', 0, 10);
        expect(records.map((r) => (JSON.parse(r.record) as { type: string }).type)).toEqual([
          'tenant.created',
          'p',
          'environment.put',
          'principal.created',
        ]);
        expect(await audit.size('globex')).toBe(0);
      }));

    it('replaces an environment', () =>
      withStore(async ({ store }) => {
        await store.putEnvironment(env(), ledger('acme', 'e'));
        const frozen = env({ class: 'staging', frozen: true });
        await store.putEnvironment(frozen, ledger('acme', 'e'));
        expect((await store.loadAll()).environments).toEqual([frozen]);
      }));

    it('refuses a tenant or project that exists, writing nothing', () =>
      withStore(async ({ store, audit }) => {
        await store.addTenant(tenant('acme'), ledger('acme', 't'));
        await expect(
          store.addTenant({ ...tenant('acme'), name: 'other' }, ledger('acme', 't')),
        ).rejects.toThrow();
        await store.addProject({ tenant: 'acme', id: 'web', createdAt: at }, ledger('acme', 'p'));
        await expect(
          store.addProject({ tenant: 'acme', id: 'web', createdAt: at }, ledger('acme', 'p')),
        ).rejects.toThrow();
        const all = await store.loadAll();
        expect(all.tenants).toEqual([tenant('acme')]);
        expect(all.projects).toEqual([{ tenant: 'acme', id: 'web' }]);
        expect(await audit.size('acme')).toBe(2);
      }));

    it('refuses a principal whose id or token hash exists, writing nothing', () =>
      withStore(async ({ store, audit }) => {
        await store.addPrincipal(principal(), token(), ledger('acme', 'x'));
        await expect(
          store.addPrincipal(
            principal(),
            token({ id: 't-2', hash: '3'.repeat(64) }),
            ledger('acme', 'x'),
          ),
        ).rejects.toThrow();
        await expect(
          store.addPrincipal(
            principal({ id: 'p-3', tenant: 'globex' }),
            token({ id: 't-3', tenant: 'globex', principal: 'p-3' }),
            ledger('globex', 'x'),
          ),
        ).rejects.toThrow();
        expect((await store.loadAll()).principals).toEqual([principal()]);
        expect((await store.loadAll()).tokens).toEqual([token()]);
        expect(await audit.size('acme')).toBe(1);
        expect(await audit.size('globex')).toBe(0);
      }));
  });
}
