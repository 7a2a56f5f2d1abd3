import { beforeEach, describe, expect, it } from 'vitest';
import { ManualClock, isGatehouseError } from '../../src/core/index.js';
import type { GatehouseError } from '../../src/core/index.js';
import {
  CedarEngine,
  MemoryPolicyStore,
  TenantPolicy,
  defaultTenantPolicy,
} from '../../src/policy/index.js';
import type { SideEffectClass } from '../../src/core/index.js';
import { policyRequest } from './requests.js';

const engine = new CedarEngine();
let store: MemoryPolicyStore;
let clock: ManualClock;
let policy: TenantPolicy;

beforeEach(async () => {
  store = new MemoryPolicyStore();
  clock = new ManualClock();
  policy = new TenantPolicy({ store, engine, clock });
  await policy.load();
});

const noMain =
  '@id("no-push-to-main")\n@reason("pushes to main go through a pull request")\n' +
  'forbid (principal, action == Gatehouse::Action::"invoke", resource == Gatehouse::Tool::"git.push")\n' +
  'when { context.input has branch && context.input.branch == "main" };';

describe('TenantPolicy.replace and read', () => {
  it('stores a valid text as the next version, with an audit record', async () => {
    expect(await policy.read('acme')).toBeUndefined();
    expect(await policy.replace('acme', undefined, defaultTenantPolicy(), 'admin-1')).toEqual({
      version: 1,
      policyIds: ['invoke-any-tool', 'unattended-read-and-workspace-write'],
    });
    clock.advance(1000);
    expect(await policy.replace('acme', 'web', noMain, 'admin-2')).toEqual({
      version: 1,
      policyIds: ['no-push-to-main'],
    });
    expect(await policy.replace('acme', undefined, defaultTenantPolicy(), 'admin-1')).toMatchObject(
      {
        version: 2,
      },
    );
    expect(await policy.read('acme', 'web')).toEqual({
      text: noMain,
      version: 1,
      updatedAt: '2026-01-01T00:00:01.000Z',
    });
    expect(store.audit[1]).toMatchObject({
      tenant: 'acme',
      type: 'policy.replaced',
      subject: 'policy/acme/web',
      actor: 'admin-2',
      at: '2026-01-01T00:00:01.000Z',
      data: {
        project: 'web',
        version: 1,
        previousVersion: null,
        policyIds: ['no-push-to-main'],
        text: noMain,
      },
    });
    expect(store.audit[2]).toMatchObject({
      subject: 'policy/acme',
      data: { version: 2, previousVersion: 1 },
    });
  });

  it('refuses an invalid text with every error and its line, changing nothing', async () => {
    await policy.replace('acme', undefined, defaultTenantPolicy(), 'admin-1');
    const text =
      '@id("a") permit (principal, action, resource) when { context.colour == "red" };\n' +
      '@id("b") permit (principal, action, resource) when { resource.owner == "me" };';
    const err = await policy.replace('acme', undefined, text, 'admin-1').catch((e: unknown) => e);
    expect(isGatehouseError(err, 'INVALID_POLICY')).toBe(true);
    const message = (err as GatehouseError).message;
    expect(message).toMatch(/line 1, column 54, policy a: attribute `colour`/);
    expect(message).toMatch(/line 2, column 54, policy b: .*owner/);
    expect((err as GatehouseError).details['errors']).toHaveLength(2);
    expect((await policy.read('acme'))?.version).toBe(1);
    expect(store.audit).toHaveLength(1);
    expect(policy.evaluate(policyRequest()).decision).toBe('allow');
  });

  it('refuses a syntax error with its line', async () => {
    await expect(
      policy.replace(
        'acme',
        'web',
        'permit (principal, action, resource);\nforbid (principal, action resource);',
        'a',
      ),
    ).rejects.toThrow(/line 2, column \d+: unexpected token/);
    expect(await policy.read('acme', 'web')).toBeUndefined();
  });
});

describe('TenantPolicy.evaluate', () => {
  it('falls back to the default tenant policy for a tenant with none stored', () => {
    const d = policy.evaluate(policyRequest());
    expect(d).toMatchObject({ decision: 'allow', determiningPolicies: ['tenant:invoke-any-tool'] });
    expect(d.reason).toBe(
      'Policy tenant:invoke-any-tool permits agent coder@1.0.0 to invoke git.push@1.2.0 in environment dev.',
    );
  });

  it('evaluates tenant and project policies together and says which scope decided', async () => {
    await policy.replace('acme', 'web', noMain, 'admin');
    const main = policy.evaluate(policyRequest({ input: { branch: 'main' } }));
    expect(main).toMatchObject({
      decision: 'deny',
      determiningPolicies: ['project:no-push-to-main'],
      cached: false,
    });
    expect(main.reason).toBe(
      'Policy project:no-push-to-main forbids agent coder@1.0.0 from invoking git.push@1.2.0 in environment dev ' +
        '(pushes to main go through a pull request). Change the call, or ask a platform admin to change the policy.',
    );
    expect(policy.evaluate(policyRequest({ input: { branch: 'feature' } }))).toMatchObject({
      decision: 'allow',
      determiningPolicies: ['tenant:invoke-any-tool'],
    });
    // Another project of the tenant is not under web's policy.
    expect(
      policy.evaluate(policyRequest({ project: 'api', input: { branch: 'main' } })).decision,
    ).toBe('allow');
  });

  it('lets a tenant forbid what a project permits', async () => {
    await policy.replace(
      'acme',
      undefined,
      '@id("no-shell") forbid (principal, action, resource) when { resource.kind == "shell" };',
      'admin',
    );
    await policy.replace(
      'acme',
      'web',
      '@id("all") permit (principal, action, resource);',
      'admin',
    );
    expect(policy.evaluate(policyRequest())).toMatchObject({
      decision: 'deny',
      determiningPolicies: ['tenant:no-shell'],
    });
  });

  it('denies by default with a reason a person can act on', async () => {
    await policy.replace('acme', undefined, '// nothing permitted', 'admin');
    const d = policy.evaluate(policyRequest());
    expect(d).toMatchObject({ decision: 'deny', determiningPolicies: [] });
    expect(d.reason).toMatch(
      /^No policy of tenant acme or project web permits agent coder@1\.0\.0 to invoke git\.push@1\.2\.0 .*Ask a platform admin/,
    );
  });

  it('denies, and says why, when a forbid cannot be evaluated for the input', async () => {
    await policy.replace(
      'acme',
      'web',
      '@id("big") forbid (principal, action, resource) when { context.input has n && context.input.n > 10 };',
      'admin',
    );
    expect(policy.evaluate(policyRequest({ input: { n: 3 } })).decision).toBe('allow');
    const d = policy.evaluate(policyRequest({ input: { n: 'eleven' } }));
    expect(d).toMatchObject({ decision: 'deny', determiningPolicies: ['project:big'] });
    expect(d.reason).toMatch(
      /^Denied because policy project:big could not be evaluated for this call \(project:big: type error.*\), and a forbid policy that fails denies\./,
    );
  });

  it('caches decisions of sets that ignore the input', () => {
    const first = policy.evaluate(policyRequest({ input: { a: 1 } }));
    const second = policy.evaluate(policyRequest({ input: { a: 2 } }));
    expect(first.cached).toBe(false);
    expect(second).toEqual({ ...first, cached: true });
    // Anything else in the request is part of the key.
    expect(policy.evaluate(policyRequest({ action: 'invokeUnattended' })).cached).toBe(false);
    expect(policy.evaluate(policyRequest({ project: 'api' })).cached).toBe(false);
  });

  it('never caches decisions of sets that read the input', async () => {
    await policy.replace('acme', 'web', noMain, 'admin');
    const decisions = ['main', 'dev', 'main', 'dev'].map((branch) =>
      policy.evaluate(policyRequest({ input: { branch } })),
    );
    expect(decisions.map((d) => [d.decision, d.cached])).toEqual([
      ['deny', false],
      ['allow', false],
      ['deny', false],
      ['allow', false],
    ]);
    // Other projects still use the tenant's input-independent set, and its cache.
    policy.evaluate(policyRequest({ project: 'api' }));
    expect(policy.evaluate(policyRequest({ project: 'api' })).cached).toBe(true);
  });

  it('forgets cached decisions when a policy is replaced', async () => {
    expect(policy.evaluate(policyRequest()).decision).toBe('allow');
    expect(policy.evaluate(policyRequest()).cached).toBe(true);
    await policy.replace(
      'acme',
      undefined,
      '@id("nothing") forbid (principal, action, resource);',
      'admin',
    );
    expect(policy.evaluate(policyRequest())).toMatchObject({
      decision: 'deny',
      determiningPolicies: ['tenant:nothing'],
      cached: false,
    });
  });

  it('bounds the cache', async () => {
    const small = new TenantPolicy({ store, engine, clock, cacheSize: 2 });
    await small.load();
    for (const id of ['a', 'b', 'c'])
      small.evaluate(policyRequest({ agent: { id, version: '1' } }));
    // Full at c: emptied, then c stored.
    expect(small.evaluate(policyRequest({ agent: { id: 'a', version: '1' } })).cached).toBe(false);
    expect(small.evaluate(policyRequest({ agent: { id: 'c', version: '1' } })).cached).toBe(true);
  });

  it('sees stored policies after load', async () => {
    await policy.replace('acme', 'web', noMain, 'admin');
    const fresh = new TenantPolicy({ store, engine: new CedarEngine(), clock });
    expect(() => fresh.evaluate(policyRequest())).toThrow(/before load/);
    await fresh.load();
    expect(fresh.evaluate(policyRequest({ input: { branch: 'main' } })).decision).toBe('deny');
  });

  it('reports a conflict when another replacement won the race', async () => {
    await Promise.all([
      policy.replace('acme', undefined, '// one', 'a'),
      policy.replace('acme', undefined, '// two', 'b'),
    ]).then(
      () => expect.fail('both replacements succeeded'),
      (e: unknown) => expect(isGatehouseError(e, 'CONFLICT')).toBe(true),
    );
    expect((await policy.read('acme'))?.version).toBe(1);
  });
});

describe('the default tenant policy', () => {
  const unattended = (effectiveClass: SideEffectClass) =>
    policy.evaluate(policyRequest({ effectiveClass, action: 'invokeUnattended' }));

  it('permits invoke of every tool in every class', () => {
    for (const effectiveClass of [
      'read',
      'workspace-write',
      'shared-write',
      'production',
    ] as const) {
      expect(policy.evaluate(policyRequest({ effectiveClass })).decision).toBe('allow');
    }
  });

  it('lets only read and workspace-write calls run unattended', () => {
    expect(unattended('read')).toMatchObject({
      decision: 'allow',
      determiningPolicies: ['tenant:unattended-read-and-workspace-write'],
    });
    expect(unattended('workspace-write').decision).toBe('allow');
    const shared = unattended('shared-write');
    expect(shared).toMatchObject({ decision: 'deny', determiningPolicies: [] });
    expect(shared.reason).toMatch(
      /effective class shared-write\) to run unattended .*needs approval/,
    );
    expect(unattended('production').decision).toBe('deny');
  });
});
