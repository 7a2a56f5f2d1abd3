import * as cedar from '@cedar-policy/cedar-wasm/nodejs';
import { describe, expect, it } from 'vitest';
import { policyReads } from '../../src/policy/policy-reads.js';

function reads(when: string, scope = 'principal, action, resource') {
  const answer = cedar.policyToJson(`permit (${scope}) when { ${when} };`);
  if (answer.type !== 'success') throw new Error(JSON.stringify(answer.errors));
  return policyReads(answer.json);
}

describe('policyReads', () => {
  it.each([
    'context.effectiveClass == "read"',
    'context.frozen || context["environment"] == "prod"',
    'context has environment && context.declaredClass like "shared*"',
    '[context.tenant, "input"].contains("x")',
    'ip("10.0.0.1").isInRange(ip("10.0.0.0/8")) && context.project == "input"',
  ])('reads neither input nor entities for %s', (when) => {
    expect(reads(when)).toEqual({ input: false, entities: false });
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
  ])('reads the input for %s', (when) => {
    expect(reads(when).input).toBe(true);
  });

  it.each([
    'principal.release == "coder@1"',
    'resource has kind',
    'Gatehouse::Environment::"prod" in Gatehouse::Tenant::"acme"',
    '[Gatehouse::Tool::"x"].contains(Gatehouse::Tool::"y")',
  ])('reads entities for %s', (when) => {
    expect(reads(when)).toEqual({ input: false, entities: true });
  });

  it('needs no entities for scope constraints alone', () => {
    expect(
      reads(
        'true',
        'principal == Gatehouse::Agent::"coder", action in [Gatehouse::Action::"invoke"], resource is Gatehouse::Tool',
      ),
    ).toEqual({ input: false, entities: false });
  });
});
