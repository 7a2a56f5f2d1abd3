import * as cedar from '@cedar-policy/cedar-wasm/nodejs';
import { describe, expect, it } from 'vitest';
import { readsInput } from '../../src/policy/reads-input.js';

function reads(when: string): boolean {
  const answer = cedar.policyToJson(`permit (principal, action, resource) when { ${when} };`);
  if (answer.type !== 'success') throw new Error(JSON.stringify(answer.errors));
  return readsInput(answer.json);
}

describe('readsInput', () => {
  it.each([
    'context.effectiveClass == "read"',
    'context.frozen || context["environment"] == "prod"',
    'context has environment && principal.release like "coder@*"',
    'resource.kind == "shell" && [context.tenant, "input"].contains("x")',
    'ip("10.0.0.1").isInRange(ip("10.0.0.0/8")) && context.project == "input"',
  ])('is false for %s', (when) => {
    expect(reads(when)).toBe(false);
  });

  it.each([
    'context.input has branch && context.input.branch == "main"',
    'context["input"] has x',
    'context has input',
    'context has input.branch',
    'context == {}',
    '[context].isEmpty()',
    'if context.frozen then context.input has x else false',
    'decimal("1.0").lessThan(decimal("2.0")) && context.input has x',
  ])('is true for %s', (when) => {
    expect(reads(when)).toBe(true);
  });

  it('is false without conditions', () => {
    const answer = cedar.policyToJson('forbid (principal, action, resource);');
    if (answer.type !== 'success') throw new Error('parse');
    expect(readsInput(answer.json)).toBe(false);
  });
});
