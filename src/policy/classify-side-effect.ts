import {
  compareClass,
  jsonEquals,
  maxClass,
  parseJsonPointer,
  resolveJsonPointer,
} from '../core/index.js';
import type { Environment, SideEffectClass } from '../core/index.js';
import type { ClassRule, ToolDescriptor } from '../tools/index.js';

/** The outcome of side-effect classification (DESIGN §3 stage 4). */
export interface SideEffectClassification {
  effectiveClass: SideEffectClass;
  declaredClass: SideEffectClass;
  /** What raised the class above the declared one: a descriptor rule, or the context. */
  raisedBy: { rule?: string; reason: string }[];
  /** Why a frozen environment refuses this call, or null when it does not. */
  frozenDenial: string | null;
}

interface CompiledRule {
  rule: ClassRule;
  label: string;
  /** Null when the pointer is not an RFC 6901 pointer. */
  tokens: string[] | null;
  /** Null when the pattern does not compile. */
  regex: RegExp | null;
}

const compiled = new WeakMap<ToolDescriptor, CompiledRule[]>();

/**
 * Classifies one call: the descriptor's declared class, raised to at least `raiseTo` by every
 * class rule whose value matches (`equals`: deep JSON equality; `in`: equal to one of; `matches`:
 * a string the regular expression matches), then by context: a `shared-write` call into a
 * `production`-class environment is `production`. A frozen environment refuses `shared-write`
 * and `production`. A rule that cannot be evaluated (a bad pointer or pattern, which publication
 * should have refused) counts as matching: classification fails towards the higher class.
 * Pure; rule patterns are compiled once per descriptor object.
 */
export function classifySideEffect(
  descriptor: ToolDescriptor,
  input: unknown,
  env: Environment,
): SideEffectClassification {
  const declaredClass = descriptor.sideEffect.class;
  let effectiveClass = declaredClass;
  const raisedBy: SideEffectClassification['raisedBy'] = [];
  for (const c of compile(descriptor)) {
    if (compareClass(c.rule.raiseTo, declaredClass) <= 0) continue;
    const verdict = evaluate(c, input);
    if (verdict === false) continue;
    effectiveClass = maxClass(effectiveClass, c.rule.raiseTo);
    raisedBy.push({
      rule: c.label,
      reason: verdict === true ? (c.rule.reason ?? describeRule(c.rule)) : verdict,
    });
  }
  if (effectiveClass === 'shared-write' && env.class === 'production') {
    effectiveClass = 'production';
    raisedBy.push({
      reason: `a shared-write call into production-class environment ${env.name} is production`,
    });
  }
  const frozenDenial =
    env.frozen && compareClass(effectiveClass, 'shared-write') >= 0
      ? `Environment ${env.name} of project ${env.project} is frozen: only read and workspace-write calls are allowed there, and this call is ${effectiveClass}.`
      : null;
  return { effectiveClass, declaredClass, raisedBy, frozenDenial };
}

function compile(descriptor: ToolDescriptor): CompiledRule[] {
  let rules = compiled.get(descriptor);
  if (!rules) {
    rules = (descriptor.sideEffect.rules ?? []).map((rule, i) => ({
      rule,
      label: `sideEffect.rules[${i}]`,
      tokens: parseJsonPointer(rule.pointer),
      regex: rule.matches === undefined ? null : tryRegExp(rule.matches),
    }));
    compiled.set(descriptor, rules);
  }
  return rules;
}

/** True when the rule matches, false when not, or why it could not be evaluated. */
function evaluate(c: CompiledRule, input: unknown): boolean | string {
  if (c.tokens === null)
    return `pointer "${c.rule.pointer}" is not a JSON pointer; treated as matching`;
  if (c.rule.matches !== undefined && c.regex === null) {
    return `pattern /${c.rule.matches}/ does not compile; treated as matching`;
  }
  const value = resolveJsonPointer(input, c.tokens);
  if (value === undefined) return false;
  if (c.rule.equals !== undefined && !jsonEquals(value, c.rule.equals)) return false;
  if (c.rule.in !== undefined && !c.rule.in.some((v) => jsonEquals(value, v))) return false;
  if (c.regex !== null && (typeof value !== 'string' || !c.regex.test(value))) return false;
  return true;
}

function describeRule(rule: ClassRule): string {
  const at = rule.pointer || '(the whole input)';
  if (rule.equals !== undefined) {
    return `${at} equals ${JSON.stringify(rule.equals)}, which raises the class to ${rule.raiseTo}`;
  }
  if (rule.in !== undefined) {
    return `${at} is one of ${JSON.stringify(rule.in)}, which raises the class to ${rule.raiseTo}`;
  }
  if (rule.matches !== undefined) {
    return `${at} matches /${rule.matches}/, which raises the class to ${rule.raiseTo}`;
  }
  return `${at} is present, which raises the class to ${rule.raiseTo}`;
}

function tryRegExp(pattern: string): RegExp | null {
  try {
    return new RegExp(pattern);
  } catch {
    return null;
  }
}
