import { fillOrigin } from '../../secrets/index.js';
import type { CredentialInjection, CredentialNeed } from '../../secrets/index.js';
import type { SchemaViolation, ToolDescriptor } from '../../tools/index.js';
import { DEFAULT_MAX_STEPS, browserExecution } from './browser-execution.js';
import type { BrowserAction } from './browser-execution.js';

/** One step of a browser call: an action and its arguments. */
export type BrowserStep =
  | { action: 'goto'; url: string }
  | { action: 'click'; selector: string }
  | { action: 'fill'; selector: string; value: string }
  | { action: 'fill'; selector: string; secret: string }
  | { action: 'press'; key: string; selector?: string }
  | { action: 'select'; selector: string; value: string }
  | { action: 'waitFor'; selector: string }
  | { action: 'waitFor'; url: string }
  | { action: 'extract'; selector: string; attribute?: string }
  | { action: 'screenshot'; fullPage?: boolean };

/** Longest URL, selector, key or attribute name a step may carry. */
const MAX_SHORT = 2048;
/** Longest value a `fill` or `select` may type. */
const MAX_VALUE = 10_000;

/** The fields each action takes: required ones, then optional ones; `|` marks alternatives. */
const FIELDS: Record<BrowserAction, { required: string[]; optional: string[] }> = {
  goto: { required: ['url'], optional: [] },
  click: { required: ['selector'], optional: [] },
  fill: { required: ['selector', 'value|secret'], optional: [] },
  press: { required: ['key'], optional: ['selector'] },
  select: { required: ['selector', 'value'], optional: [] },
  waitFor: { required: ['selector|url'], optional: [] },
  extract: { required: ['selector'], optional: ['attribute'] },
  screenshot: { required: [], optional: ['fullPage'] },
};

/** A secret a `fill` step may type: where the broker puts it, and whose pages may receive it. */
export interface FillableSecret {
  /** The lease's environment variable that holds the issued value. */
  env: string;
  /**
   * The exact origin (`exactOrigin`) of the only pages it is typed into; undefined for a
   * descriptor published before fills were bound, whose fills are then refused.
   */
  origin: string | undefined;
}

/**
 * The secrets a `fill` step of this descriptor may type, by name: the `ref` of each of its
 * credentials injected as an environment variable (the broker issues them per call), with the
 * origin it is bound to.
 */
export function fillableSecrets(d: ToolDescriptor): Map<string, FillableSecret> {
  const names = new Map<string, FillableSecret>();
  for (const c of (d.credentials ?? []) as unknown as CredentialNeed[]) {
    const inject = c.inject as Partial<Extract<CredentialInjection, { env: string }>> | undefined;
    if (typeof c.ref === 'string' && typeof inject?.env === 'string')
      names.set(c.ref, { env: inject.env, origin: fillOrigin({ ...inject, env: inject.env }) });
  }
  return names;
}

/**
 * What is wrong with a browser call's input beyond its schema, each with the JSON pointer of the
 * step or field: `{steps: [...]}` with at most the descriptor's `maxSteps`, each step one of the
 * descriptor's `allowedActions` with exactly its fields; `goto` and `waitFor` URLs absolute
 * http(s); a `fill` secret one the descriptor's credentials name. Empty when the input is fine.
 */
export function browserInputProblems(d: ToolDescriptor, input: unknown): SchemaViolation[] {
  const c = browserExecution(d);
  if (
    typeof input !== 'object' ||
    input === null ||
    !Array.isArray((input as { steps?: unknown }).steps)
  )
    return [{ pointer: '/steps', message: 'is required: a browser call is {steps: [...]}' }];
  const steps = (input as { steps: unknown[] }).steps;
  const max = c.maxSteps ?? DEFAULT_MAX_STEPS;
  const problems: SchemaViolation[] = [];
  if (steps.length === 0)
    problems.push({ pointer: '/steps', message: 'is empty; give at least one step' });
  if (steps.length > max)
    problems.push({
      pointer: '/steps',
      message: `has ${steps.length} steps; this tool takes at most ${max}`,
    });
  const secrets = fillableSecrets(d);
  steps
    .slice(0, max)
    .forEach((step, i) =>
      problems.push(...stepProblems(step, `/steps/${i}`, c.allowedActions, secrets)),
    );
  return problems;
}

function stepProblems(
  step: unknown,
  at: string,
  allowed: readonly string[],
  secrets: ReadonlyMap<string, unknown>,
): SchemaViolation[] {
  if (typeof step !== 'object' || step === null || Array.isArray(step))
    return [{ pointer: at, message: 'must be an object {action, ...}' }];
  const s = step as Record<string, unknown>;
  const action = s.action;
  if (typeof action !== 'string' || !Object.hasOwn(FIELDS, action))
    return [
      { pointer: `${at}/action`, message: `must be one of ${Object.keys(FIELDS).join(', ')}` },
    ];
  if (!allowed.includes(action))
    return [
      {
        pointer: `${at}/action`,
        message: `is ${action}, which this tool does not allow (allowed: ${allowed.join(', ')})`,
      },
    ];
  const spec = FIELDS[action as BrowserAction];
  const problems: SchemaViolation[] = [];
  const known = new Set([
    'action',
    ...spec.optional,
    ...spec.required.flatMap((f) => f.split('|')),
  ]);
  for (const k of Object.keys(s))
    if (!known.has(k))
      problems.push({ pointer: `${at}/${k}`, message: `is not a field of ${action}` });
  for (const req of spec.required) {
    const present = req.split('|').filter((f) => s[f] !== undefined);
    if (present.length === 0)
      problems.push({
        pointer: `${at}/${req.split('|')[0]!}`,
        message: `is required for ${action}${req.includes('|') ? ` (or ${req.split('|').slice(1).join(', ')})` : ''}`,
      });
    if (present.length > 1)
      problems.push({
        pointer: `${at}/${present[1]!}`,
        message: `${action} takes one of ${req.split('|').join(', ')}, not both`,
      });
  }
  for (const [k, v] of Object.entries(s)) {
    if (k === 'action' || !known.has(k)) continue;
    const problem = fieldProblem(k, v, secrets);
    if (problem !== null) problems.push({ pointer: `${at}/${k}`, message: problem });
  }
  return problems;
}

function fieldProblem(
  field: string,
  v: unknown,
  secrets: ReadonlyMap<string, unknown>,
): string | null {
  if (field === 'fullPage') return typeof v === 'boolean' ? null : 'must be true or false';
  if (typeof v !== 'string') return 'must be a string';
  const max = field === 'value' ? MAX_VALUE : MAX_SHORT;
  if (v.length > max) return `is ${v.length} characters; at most ${max}`;
  if (field !== 'value' && v.length === 0) return 'must not be empty';
  if (field === 'url') return urlProblem(v);
  if (field === 'secret' && !secrets.has(v))
    return secrets.size === 0
      ? `names secret ${JSON.stringify(v)}, but this tool declares no credentials a step may type`
      : `names secret ${JSON.stringify(v)}; this tool may type only ${[...secrets.keys()].join(', ')}`;
  return null;
}

/** Why a URL may not be visited: only absolute http(s) URLs (no file:, chrome:, data:, javascript:). */
export function urlProblem(url: string): string | null {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return 'is not an absolute URL';
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:')
    return `is a ${parsed.protocol} URL; a browser tool visits only http: and https: URLs`;
  if (parsed.username !== '' || parsed.password !== '')
    return 'carries a user name or password; pass credentials as a brokered secret instead';
  return null;
}
