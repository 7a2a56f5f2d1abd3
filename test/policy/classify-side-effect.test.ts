import { describe, expect, it } from 'vitest';
import type { Environment } from '../../src/core/index.js';
import { classifySideEffect } from '../../src/policy/index.js';
import type { ClassRule, ToolDescriptor } from '../../src/tools/index.js';
import { devEnvironment } from './requests.js';

function descriptor(
  declared: ToolDescriptor['sideEffect']['class'],
  rules: ClassRule[] = [],
): ToolDescriptor {
  return {
    id: 'repo.write',
    version: '1.0.0',
    kind: 'native',
    description: 'writes to a repository',
    inputSchema: { type: 'object' },
    sideEffect: { class: declared, rules },
    execution: { handler: 'repo.write' },
  };
}

const prod: Environment = { ...devEnvironment, name: 'prod', class: 'production' };

describe('classifySideEffect', () => {
  it('keeps the declared class when no rule matches', () => {
    const d = descriptor('workspace-write', [
      { pointer: '/push', equals: true, raiseTo: 'shared-write' },
    ]);
    expect(classifySideEffect(d, { push: false }, devEnvironment)).toEqual({
      effectiveClass: 'workspace-write',
      declaredClass: 'workspace-write',
      raisedBy: [],
      frozenDenial: null,
    });
  });

  it('raises by equals with deep JSON equality, naming the rule', () => {
    const d = descriptor('read', [
      {
        pointer: '/target',
        equals: { repo: 'core', refs: ['main'] },
        raiseTo: 'shared-write',
        reason: 'writes core/main',
      },
    ]);
    const hit = classifySideEffect(d, { target: { refs: ['main'], repo: 'core' } }, devEnvironment);
    expect(hit.effectiveClass).toBe('shared-write');
    expect(hit.raisedBy).toEqual([{ rule: 'sideEffect.rules[0]', reason: 'writes core/main' }]);
    expect(
      classifySideEffect(d, { target: { refs: ['main', 'dev'], repo: 'core' } }, devEnvironment)
        .effectiveClass,
    ).toBe('read');
  });

  it('raises by in and by matches, to the highest matching class', () => {
    const d = descriptor('read', [
      { pointer: '/mode', in: ['write', 'admin'], raiseTo: 'workspace-write' },
      { pointer: '/url', matches: '^https://prod\\.', raiseTo: 'production' },
      { pointer: '/url', matches: 'example', raiseTo: 'shared-write' },
    ]);
    const c = classifySideEffect(
      d,
      { mode: 'admin', url: 'https://prod.example.com' },
      devEnvironment,
    );
    expect(c.effectiveClass).toBe('production');
    expect(c.raisedBy.map((r) => r.rule)).toEqual([
      'sideEffect.rules[0]',
      'sideEffect.rules[1]',
      'sideEffect.rules[2]',
    ]);
    expect(c.raisedBy[1]?.reason).toBe(
      '/url matches /^https://prod\\./, which raises the class to production',
    );
    // matches applies to strings only.
    expect(classifySideEffect(d, { url: 42 }, devEnvironment).effectiveClass).toBe('read');
  });

  it('follows RFC 6901 pointers with ~0 and ~1 escapes and array indexes', () => {
    const d = descriptor('read', [
      { pointer: '/a~1b/m~0n', equals: 1, raiseTo: 'workspace-write' },
      { pointer: '/list/1/name', equals: 'x', raiseTo: 'shared-write' },
      { pointer: '/list/01/name', equals: 'x', raiseTo: 'production' },
    ]);
    const c = classifySideEffect(
      d,
      { 'a/b': { 'm~n': 1 }, list: [{}, { name: 'x' }] },
      devEnvironment,
    );
    expect(c.effectiveClass).toBe('shared-write');
    expect(classifySideEffect(d, { a: { b: { 'm~n': 1 } } }, devEnvironment).effectiveClass).toBe(
      'read',
    );
    // "~01" is "~1" literally, not "/".
    const literal = descriptor('read', [
      { pointer: '/~01', equals: true, raiseTo: 'workspace-write' },
    ]);
    expect(classifySideEffect(literal, { '~1': true }, devEnvironment).effectiveClass).toBe(
      'workspace-write',
    );
    expect(classifySideEffect(literal, { '/': true }, devEnvironment).effectiveClass).toBe('read');
  });

  it('ignores inherited members', () => {
    const d = descriptor('read', [
      { pointer: '/constructor', in: [Object], raiseTo: 'production' },
    ]);
    expect(classifySideEffect(d, {}, devEnvironment).effectiveClass).toBe('read');
  });

  it('fails towards the higher class for a rule it cannot evaluate', () => {
    const d = descriptor('read', [{ pointer: '/x', matches: '([', raiseTo: 'shared-write' }]);
    const c = classifySideEffect(d, {}, devEnvironment);
    expect(c.effectiveClass).toBe('shared-write');
    expect(c.raisedBy[0]?.reason).toMatch(/does not compile/);
  });

  it('makes a shared-write call into a production environment production', () => {
    const c = classifySideEffect(descriptor('shared-write'), {}, prod);
    expect(c.effectiveClass).toBe('production');
    expect(c.raisedBy).toEqual([
      { reason: 'a shared-write call into production-class environment prod is production' },
    ]);
    expect(classifySideEffect(descriptor('workspace-write'), {}, prod).effectiveClass).toBe(
      'workspace-write',
    );
    // A rule-raised shared-write is raised by context too.
    const ruled = descriptor('read', [{ pointer: '/pr', equals: true, raiseTo: 'shared-write' }]);
    expect(classifySideEffect(ruled, { pr: true }, prod).effectiveClass).toBe('production');
  });

  it('refuses shared-write and production in a frozen environment, only those', () => {
    const frozen: Environment = {
      ...devEnvironment,
      name: 'staging',
      class: 'staging',
      frozen: true,
    };
    expect(classifySideEffect(descriptor('shared-write'), {}, frozen).frozenDenial).toBe(
      'Environment staging of project web is frozen: only read and workspace-write calls are allowed there, and this call is shared-write.',
    );
    expect(classifySideEffect(descriptor('production'), {}, frozen).frozenDenial).toMatch(
      /this call is production/,
    );
    expect(classifySideEffect(descriptor('workspace-write'), {}, frozen).frozenDenial).toBeNull();
    expect(classifySideEffect(descriptor('read'), {}, frozen).frozenDenial).toBeNull();
  });
});
