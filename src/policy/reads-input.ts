import type { PolicyJson } from '@cedar-policy/cedar-wasm/nodejs';

/**
 * True unless the policy provably never reads `context.input`, judged from its JSON form: any
 * `context.input`, `context has input`, or use of `context` other than reading (or testing) one
 * of its other attributes counts as reading the input. Conservative by design: a false `true`
 * only costs a cache miss; a false `false` would serve a decision made for another input.
 */
export function readsInput(policy: PolicyJson): boolean {
  return policy.conditions.some((c) => exprReadsInput(c.body));
}

function exprReadsInput(expr: unknown): boolean {
  if (Array.isArray(expr)) return expr.some(exprReadsInput);
  if (expr === null || typeof expr !== 'object') return false;
  const node = expr as Record<string, unknown>;
  if ('Value' in node && Object.keys(node).length === 1) return false; // a literal
  if (node['Var'] === 'context') return true; // `context` as a whole
  for (const op of ['.', 'has'] as const) {
    const access = node[op] as { left?: unknown; attr?: unknown } | undefined;
    if (access && isContextVar(access.left)) {
      const first: unknown = Array.isArray(access.attr) ? access.attr[0] : access.attr;
      return typeof first !== 'string' || first === 'input';
    }
  }
  return Object.values(node).some(exprReadsInput);
}

function isContextVar(expr: unknown): boolean {
  return (
    typeof expr === 'object' &&
    expr !== null &&
    (expr as Record<string, unknown>)['Var'] === 'context'
  );
}
