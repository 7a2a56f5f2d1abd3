import { describe, expect, it } from 'vitest';
import { CedarEngine, defaultTenantPolicy } from '../../src/policy/index.js';
import { policyRequest } from './requests.js';

const engine = new CedarEngine();

describe('CedarEngine.validatePolicies', () => {
  // Twelve policies, so Cedar's ids (policy0 … policy11) sort differently from text order.
  const twelve = Array.from({ length: 12 }, (_, i) =>
    i % 5 === 0
      ? `@id("p-${i}") permit (principal, action, resource);`
      : `permit (principal, action, resource) when { context.tenant == "t${i}" };`,
  );

  it('accepts a valid text and lists @id and default ids in text order', () => {
    const result = engine.validatePolicies(twelve.join('\n'));
    expect(result).toEqual({
      ok: true,
      policyIds: twelve.map((_, i) => (i % 5 === 0 ? `p-${i}` : `policy${i}`)),
    });
  });

  it('names the right policy of many in a validation error', () => {
    const text = [...twelve];
    text[10] = '@id("bad") permit (principal, action, resource) when { context.nope };';
    const result = engine.validatePolicies(text.join('\n'));
    expect(result).toMatchObject({ ok: false, errors: [{ policyId: 'bad', line: 11 }] });
  });

  it('reports a syntax error with its line and column', () => {
    const text =
      '// é comment\n@id("a")\npermit (principal, action, resource)\nwhen { context.frozen == };';
    const result = engine.validatePolicies(text);
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.errors).toHaveLength(1);
    expect(result.errors[0]).toMatchObject({ line: 4, column: 26 });
    expect(result.errors[0]?.message).toMatch(/unexpected token `}`/);
  });

  it('reports a schema violation with policy id, line and column, once', () => {
    const text =
      '@id("ok") permit (principal, action, resource);\n' +
      '@id("typo")\npermit (principal, action, resource)\n  when { context.environmnt == "prod" };';
    const result = engine.validatePolicies(text);
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.errors).toEqual([
      {
        policyId: 'typo',
        line: 4,
        column: 10,
        message: expect.stringMatching(
          /attribute `environmnt` in context not found.*did you mean `environment`/,
        ) as unknown,
      },
    ]);
  });

  it('refuses an unknown entity attribute and an unknown entity type', () => {
    const result = engine.validatePolicies(
      'permit (principal, action, resource) when { resource.owner == "x" };\n' +
        'permit (principal == Gatehouse::User::"u", action, resource);',
    );
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.errors.map((e) => [e.policyId, e.line])).toEqual([
      ['policy0', 1],
      ['policy1', 2],
    ]);
    expect(result.errors[0]?.message).toMatch(/owner/);
    expect(result.errors[1]?.message).toMatch(/Gatehouse::User/);
  });

  it('refuses an unguarded input attribute and says how to guard it', () => {
    const result = engine.validatePolicies(
      'forbid (principal, action, resource) when { context.input.branch == "main" };',
    );
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.errors[0]?.message).toMatch(/context\.input has branch/);
  });

  it('accepts guarded input attributes, nested ones too', () => {
    const result = engine.validatePolicies(
      'forbid (principal, action, resource) when { context.input has branch && context.input.branch == "main" };\n' +
        'forbid (principal, action, resource) when { context.input has repo.name && context.input.repo.name like "prod-*" };',
    );
    expect(result.ok).toBe(true);
  });

  it('refuses duplicate ids, naming the line of the second', () => {
    const result = engine.validatePolicies(
      '@id("x") permit (principal, action, resource);\n\n@id("x") forbid (principal, action, resource);',
    );
    expect(result).toEqual({
      ok: false,
      errors: [
        { message: 'another policy already has the id "x"', policyId: 'x', line: 3, column: 1 },
      ],
    });
  });

  it('refuses templates', () => {
    const result = engine.validatePolicies('permit (principal == ?principal, action, resource);');
    expect(result.ok).toBe(false);
  });

  it('accepts the default tenant policy', () => {
    expect(engine.validatePolicies(defaultTenantPolicy())).toEqual({
      ok: true,
      policyIds: ['invoke-any-tool', 'unattended-read-and-workspace-write'],
    });
  });
});

describe('CedarEngine.authorize', () => {
  it('allows by a permit and names it by @id, with scope prefixes', () => {
    engine.prepare('scoped', {
      tenant: '@id("all") permit (principal, action, resource);',
      project:
        '@id("no-main") forbid (principal, action == Gatehouse::Action::"invoke", resource) when { context.input has branch && context.input.branch == "main" };',
    });
    expect(engine.authorize('scoped', policyRequest({ input: { branch: 'dev' } }))).toEqual({
      decision: 'allow',
      determiningPolicies: ['tenant:all'],
      errors: [],
      failedForbids: [],
    });
    expect(engine.authorize('scoped', policyRequest({ input: { branch: 'main' } }))).toMatchObject({
      decision: 'deny',
      determiningPolicies: ['project:no-main'],
    });
  });

  it('denies by default when nothing permits', () => {
    engine.prepare('empty', '');
    expect(engine.authorize('empty', policyRequest())).toEqual({
      decision: 'deny',
      determiningPolicies: [],
      errors: [],
      failedForbids: [],
    });
  });

  it('builds principal, resource and the environment hierarchy', () => {
    engine.prepare(
      'entities',
      `@id("shell-by-coder-in-acme") permit (principal, action, resource)
       when { principal.release == "coder@1.0.0" && principal.agentId == "coder" &&
              resource.kind == "shell" && resource.version == "1.2.0" && resource.toolId == "git.push" &&
              Gatehouse::Environment::"dev" in Gatehouse::Tenant::"acme" &&
              context.environmentClass == "development" && !context.frozen };`,
    );
    expect(engine.authorize('entities', policyRequest()).decision).toBe('allow');
    expect(
      engine.authorize('entities', policyRequest({ agent: { id: 'coder', version: '2.0.0' } }))
        .decision,
    ).toBe('deny');
  });

  it('denies when a forbid fails to evaluate (fail closed); a failing permit just does not permit', () => {
    engine.prepare('broken', {
      tenant:
        '@id("all") permit (principal, action, resource);\n' +
        '@id("big") forbid (principal, action, resource) when { context.input has n && context.input.n > 10 };',
    });
    expect(engine.authorize('broken', policyRequest({ input: { n: 3 } })).decision).toBe('allow');
    const failed = engine.authorize('broken', policyRequest({ input: { n: 'eleven' } }));
    expect(failed).toMatchObject({
      decision: 'deny',
      determiningPolicies: ['tenant:big'],
      failedForbids: ['tenant:big'],
    });
    expect(failed.errors[0]).toMatch(/^tenant:big: /);
    // A non-integer number becomes text, so the comparison fails and the forbid denies.
    expect(engine.authorize('broken', policyRequest({ input: { n: 10.5 } })).decision).toBe('deny');
  });

  it('reads arguments that JSON has and Cedar lacks without failing the request', () => {
    engine.prepare(
      'inputs',
      '@id("p") permit (principal, action, resource) when { !(context.input has gone) && context.input.tags.contains("a") };',
    );
    const decision = engine.authorize(
      'inputs',
      policyRequest({ input: { gone: null, tags: ['a', null] } }),
    );
    expect(decision.decision).toBe('allow');
  });

  it('does not let an input forge an entity reference', () => {
    engine.prepare(
      'forge',
      '@id("p") permit (principal, action, resource) when { context.input has owner && context.input.owner == Gatehouse::Tenant::"acme" };',
    );
    const forged = { owner: { __entity: { type: 'Gatehouse::Tenant', id: 'acme' } } };
    expect(engine.authorize('forge', policyRequest({ input: forged })).decision).toBe('deny');
  });

  it('reports which sets read the input', () => {
    expect(engine.prepare('a', defaultTenantPolicy()).inputIndependent).toBe(true);
    expect(
      engine.prepare('b', 'forbid (principal, action, resource) when { context has input };')
        .inputIndependent,
    ).toBe(false);
  });
});

describe('CedarEngine when Cedar traps', () => {
  it('refuses a text nested too deep for Cedar, and keeps deciding with the sets it had', () => {
    const own = new CedarEngine();
    own.prepare('kept', '@id("all") permit (principal, action, resource);');
    const deep = `permit (principal, action, resource) when { ${'('.repeat(1000)}true${')'.repeat(1000)} };`;
    const refused = own.validatePolicies(deep);
    expect(refused.ok).toBe(false);
    if (refused.ok) return;
    expect(refused.errors[0]?.message).toMatch(/nests too deeply or is too large/);
    // The trap replaced the instance, and what was prepared before still decides.
    expect(own.instances).toBe(2);
    expect(own.authorize('kept', policyRequest()).decision).toBe('allow');
    expect(own.validatePolicies('permit (principal, action, resource);')).toEqual({
      ok: true,
      policyIds: ['policy0'],
    });
    expect(() => own.prepare('deep', deep)).toThrow(/INVALID_POLICY|nests too deeply/);
    expect(own.authorize('kept', policyRequest()).decision).toBe('allow');
  });
});

describe('CedarEngine with an input Cedar cannot read', () => {
  it('denies an input nested past Cedar’s recursion limit instead of throwing', () => {
    const own = new CedarEngine();
    own.prepare(
      'reads-input',
      '@id("x") permit (principal, action, resource) when { context.input has branch && context.input.branch == "x" };',
    );
    let deep: unknown = 1;
    for (let i = 0; i < 200; i++) deep = { k: deep };
    const r = own.authorize('reads-input', policyRequest({ input: { branch: 'x', deep } }));
    expect(r.decision).toBe('deny');
    expect(r.errors[0]).toMatch(/^request: Cedar could not read it: recursion limit exceeded/);
    expect(own.instances).toBe(1);
    expect(own.authorize('reads-input', policyRequest({ input: { branch: 'x' } })).decision).toBe(
      'allow',
    );
  });
});
