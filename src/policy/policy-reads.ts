import type { PolicyJson } from '@cedar-policy/cedar-wasm/nodejs';

/** What a policy's conditions may read beyond the context's fixed facts. */
interface PolicyReads {
  /**
   * True unless the policy provably never reads `context.input`: any `context.input`,
   * `context has input`, or use of `context` other than reading (or testing) one of its other
   * attributes counts. A false `true` costs a cache miss; a false `false` would serve a decision
   * made for another input, so the judgement is conservative.
   */
  input: boolean;
  /**
   * True when a condition names `principal` or `resource`, or an entity literal such as
   * `Gatehouse::Environment::"prod"`: only then do entity attributes and the tenant hierarchy
   * matter. (Scope constraints never need entity data: agents and tools have no parents.)
   */
  entities: boolean;
}

/** What `policy` may read, judged from its JSON form. Pure. */
export function policyReads(policy: PolicyJson): PolicyReads {
  const reads: PolicyReads = { input: false, entities: false };
  for (const c of policy.conditions) walk(c.body, reads);
  return reads;
}

function walk(expr: unknown, reads: PolicyReads): void {
  if (Array.isArray(expr)) {
    for (const e of expr) walk(e, reads);
    return;
  }
  if (expr === null || typeof expr !== 'object') return;
  const node = expr as Record<string, unknown>;
  const keys = Object.keys(node);
  if (keys.length === 1 && keys[0] === 'Value') {
    if (JSON.stringify(node['Value']).includes('"__entity"')) reads.entities = true;
    return;
  }
  const variable = node['Var'];
  if (variable === 'context') reads.input = true; // `context` as a whole
  if (variable === 'principal' || variable === 'resource') reads.entities = true;
  for (const op of ['.', 'has'] as const) {
    const access = node[op] as { left?: unknown; attr?: unknown } | undefined;
    if (access && isContextVar(access.left)) {
      const first: unknown = Array.isArray(access.attr) ? access.attr[0] : access.attr;
      if (typeof first !== 'string' || first === 'input') reads.input = true;
      return;
    }
  }
  for (const value of Object.values(node)) walk(value, reads);
}

function isContextVar(expr: unknown): boolean {
  return (
    typeof expr === 'object' &&
    expr !== null &&
    (expr as Record<string, unknown>)['Var'] === 'context'
  );
}
