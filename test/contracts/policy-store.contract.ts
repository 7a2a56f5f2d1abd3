import { describe, expect, it } from 'vitest';
import { isGatehouseError } from '../../src/core/index.js';
import type { AuditRecordDraft } from '../../src/core/index.js';
import type { PolicyStore, StoredPolicy } from '../../src/policy/index.js';

/**
 * The contract every {@link PolicyStore} keeps. Registers a vitest suite named `name`; `make`
 * gives a fresh, empty store for each test and a `close` that releases it.
 */
export function policyStoreContract(
  name: string,
  make: () => Promise<{ store: PolicyStore; close(): Promise<void> }>,
): void {
  async function withStore(body: (store: PolicyStore) => Promise<void>): Promise<void> {
    const made = await make();
    try {
      await body(made.store);
    } finally {
      await made.close();
    }
  }

  const policy = (over: Partial<StoredPolicy> = {}): StoredPolicy => ({
    tenant: 'acme',
    project: null,
    text: 'permit (principal, action, resource);',
    version: 1,
    updatedAt: '2026-01-01T00:00:00.000Z',
    ...over,
  });
  const audit = (p: StoredPolicy): AuditRecordDraft => ({
    tenant: p.tenant,
    type: 'policy.replaced',
    subject: p.project === null ? `policy/${p.tenant}` : `policy/${p.tenant}/${p.project}`,
    at: p.updatedAt,
    actor: 'admin-1',
    data: { version: p.version },
  });

  describe(`PolicyStore contract: ${name}`, () => {
    it('gives back what was put', () =>
      withStore(async (store) => {
        const p = policy({ text: '@id("é") permit (principal, action, resource);\n' });
        await store.put(p, audit(p));
        expect(await store.get('acme', null)).toEqual(p);
      }));

    it('has nothing for a scope never written', () =>
      withStore(async (store) => {
        expect(await store.get('acme', null)).toBeUndefined();
        expect(await store.get('acme', 'web')).toBeUndefined();
      }));

    it('keeps the newest version of a scope', () =>
      withStore(async (store) => {
        const v1 = policy();
        const v2 = policy({
          version: 2,
          text: 'forbid (principal, action, resource);',
          updatedAt: '2026-01-02T00:00:00.000Z',
        });
        await store.put(v1, audit(v1));
        await store.put(v2, audit(v2));
        expect(await store.get('acme', null)).toEqual(v2);
        expect(await store.list()).toEqual([v2]);
      }));

    it('refuses a version that does not follow the stored one, changing nothing', () =>
      withStore(async (store) => {
        const v1 = policy();
        await store.put(v1, audit(v1));
        for (const version of [1, 3]) {
          const bad = policy({ version, text: 'forbid (principal, action, resource);' });
          const err: unknown = await store.put(bad, audit(bad)).then(
            () => undefined,
            (e: unknown) => e,
          );
          expect(isGatehouseError(err, 'CONFLICT')).toBe(true);
        }
        const first = policy({ project: 'web', version: 2 });
        await expect(store.put(first, audit(first))).rejects.toSatisfy((e) =>
          isGatehouseError(e, 'CONFLICT'),
        );
        expect(await store.get('acme', null)).toEqual(v1);
        expect(await store.get('acme', 'web')).toBeUndefined();
      }));

    it('keeps tenant, project and other tenants apart', () =>
      withStore(async (store) => {
        const tenant = policy();
        const project = policy({ project: 'web', text: 'forbid (principal, action, resource);' });
        const other = policy({ project: 'api', text: '// api' });
        const elsewhere = policy({ tenant: 'globex', text: '// globex' });
        for (const p of [tenant, project, other, elsewhere]) await store.put(p, audit(p));
        expect(await store.get('acme', null)).toEqual(tenant);
        expect(await store.get('acme', 'web')).toEqual(project);
        expect(await store.get('acme', 'api')).toEqual(other);
        expect(await store.get('globex', null)).toEqual(elsewhere);
        expect(await store.get('globex', 'web')).toBeUndefined();
        const byScope = (a: StoredPolicy, b: StoredPolicy) =>
          JSON.stringify([a.tenant, a.project]).localeCompare(
            JSON.stringify([b.tenant, b.project]),
          );
        expect((await store.list()).sort(byScope)).toEqual(
          [tenant, project, other, elsewhere].sort(byScope),
        );
      }));
  });
}
