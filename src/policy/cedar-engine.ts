import { randomUUID } from 'node:crypto';
import { setFlagsFromString } from 'node:v8';
import type { DetailedError, PolicyJson } from '@cedar-policy/cedar-wasm/nodejs';
import { ErrorCode, GatehouseError, IllegalStateError } from '../core/index.js';
import { isWasmTrap, loadCedar } from './cedar-instance.js';
import type { Cedar } from './cedar-instance.js';
import { GATEHOUSE_CEDAR_SCHEMA } from './cedar-schema.js';
import { toCedarRequest } from './cedar-request.js';
import { parsePolicySource } from './policy-source.js';
import type { ParsedPolicy } from './policy-source.js';
import type { PolicyRequest } from './policy-request.js';
import { policyReads } from './policy-reads.js';
import { sourcePosition } from './source-position.js';

/** One problem of a policy text, with where it is when Cedar says. */
export interface PolicyValidationError {
  message: string;
  /** The `@id` of the policy, or Cedar's default id (`policy0`, …). */
  policyId?: string;
  /** 1-based. */
  line?: number;
  /** 1-based. */
  column?: number;
}

/** The outcome of validating a policy text against the Gatehouse schema. */
export type PolicyValidation =
  { ok: true; policyIds: string[] } | { ok: false; errors: PolicyValidationError[] };

/** What {@link CedarEngine.prepare} made of a policy set. */
export interface PreparedPolicySet {
  /** Ids as decisions name them (`tenant:<id>` when prepared from scoped sources). */
  policyIds: string[];
  /** True when no policy of the set can read `context.input`: its decisions may be cached. */
  inputIndependent: boolean;
}

/** The answer of {@link CedarEngine.authorize}. */
export interface AuthorizationResult {
  decision: 'allow' | 'deny';
  /** On allow, the permits that matched; on deny, the forbids that matched (or failed), else []. */
  determiningPolicies: string[];
  /** Evaluation errors, each `<policy id>: <message>`. */
  errors: string[];
  /** Forbid policies that failed to evaluate; each one denies (fail closed). */
  failedForbids: string[];
}

/**
 * Cedar scopes of a combined set, in the order their ids are listed: each key prefixes the ids of
 * its text's policies, e.g. `{tenant: '…', project: '…'}` gives `tenant:x` and `project:y`.
 */
export type PolicySources = Readonly<Record<string, string>>;

interface PreparedEntry extends PreparedPolicySet {
  /** The policies as prepared, to prepare again in a fresh instance. */
  policies: Record<string, PolicyJson>;
  /** Whether a condition reads entities; when none does, requests carry none (faster). */
  readsEntities: boolean;
  effects: Map<string, PolicyJson['effect']>;
  annotations: Map<string, Record<string, string>>;
}

/** Why a text Cedar trapped on is refused. */
const TOO_COMPLEX =
  'Cedar could not process this text: it nests too deeply or is too large for its parser (it ran out of stack); flatten the nested expressions or split the policy';

/**
 * Cedar, with the Gatehouse schema: validates policy texts, preparses policy sets once, and
 * authorizes requests against a preparsed set. Synchronous. Each engine has its own WebAssembly
 * instance of Cedar; when Cedar traps (its stack overflows on a text nesting a few hundred levels
 * deep, which corrupts the instance), the engine replaces the instance, prepares its sets in the
 * new one, and answers that call as refused: invalid for a text, deny for a request.
 */
export class CedarEngine {
  private readonly sets = new Map<string, PreparedEntry>();
  private readonly namespace = `gatehouse/${randomUUID()}/`;
  private cedar: Cedar = loadCedar();

  constructor() {
    avoidJsWasmInliningCrash();
  }

  /**
   * Parses `text` and validates it against the Gatehouse schema (strict mode). Every error comes
   * with its policy id and its line and column where Cedar gives a position. Warnings (such as an
   * input guard the validator deems impossible) are not errors. Never throws.
   */
  validatePolicies(text: string): PolicyValidation {
    return this.guarded<PolicyValidation>(
      (cedar) => this.validateWith(cedar, text),
      () => ({ ok: false, errors: [{ message: TOO_COMPLEX }] }),
    );
  }

  /** Instances of Cedar made so far (1 until one trapped). */
  get instances(): number {
    return this.made;
  }

  private made = 1;

  private validateWith(cedar: Cedar, text: string): PolicyValidation {
    const answer = cedar.validate({
      schema: GATEHOUSE_CEDAR_SCHEMA,
      policies: { staticPolicies: text },
    });
    if (answer.type === 'failure') {
      return { ok: false, errors: dedupe(answer.errors.map((e) => toValidationError(text, e))) };
    }
    const parsed = parsePolicySource(cedar, text);
    if (!parsed.ok) {
      return { ok: false, errors: parsed.errors.map((e) => toValidationError(text, e)) };
    }
    const byCedarId = new Map(parsed.policies.map((p) => [p.cedarId, p.id]));
    const errors = answer.validationErrors.map((v) =>
      toValidationError(text, v.error, byCedarId.get(v.policyId) ?? v.policyId),
    );
    errors.push(...duplicateIds(text, parsed.policies));
    if (errors.length > 0) return { ok: false, errors: dedupe(errors) };
    return { ok: true, policyIds: parsed.policies.map((p) => p.id) };
  }

  /**
   * Preparses a policy set under `setId`, replacing any set prepared under that id. `sources` is
   * one policy text (ids unprefixed) or {@link PolicySources} (ids prefixed by scope). Texts are
   * expected to have passed {@link validatePolicies}.
   * @throws GatehouseError INVALID_POLICY when a text does not parse or ids collide.
   */
  prepare(setId: string, sources: string | PolicySources): PreparedPolicySet {
    return this.guarded(
      (cedar) => this.prepareWith(cedar, setId, sources),
      () => {
        throw new GatehouseError(
          ErrorCode.INVALID_POLICY,
          `Cannot prepare policy set ${setId}: ${TOO_COMPLEX}.`,
        );
      },
    );
  }

  private prepareWith(
    cedar: Cedar,
    setId: string,
    sources: string | PolicySources,
  ): PreparedPolicySet {
    const scoped: [string, string][] =
      typeof sources === 'string' ? [['', sources]] : Object.entries(sources);
    const staticPolicies: Record<string, PolicyJson> = {};
    const entry: PreparedEntry = {
      policies: staticPolicies,
      policyIds: [],
      inputIndependent: true,
      readsEntities: false,
      effects: new Map(),
      annotations: new Map(),
    };
    for (const [scope, text] of scoped) {
      const parsed = parsePolicySource(cedar, text);
      if (!parsed.ok) throw invalidPolicy(`the ${scope || 'policy'} text`, parsed.errors);
      for (const p of parsed.policies) {
        const id = scope ? `${scope}:${p.id}` : p.id;
        if (id in staticPolicies) {
          throw new GatehouseError(ErrorCode.INVALID_POLICY, `Two policies have the id ${id}.`);
        }
        staticPolicies[id] = p.json;
        entry.policyIds.push(id);
        entry.effects.set(id, p.json.effect);
        entry.annotations.set(id, p.json.annotations ?? {});
        const reads = policyReads(p.json);
        if (reads.input) entry.inputIndependent = false;
        if (reads.entities) entry.readsEntities = true;
      }
    }
    const answer = cedar.preparsePolicySet(this.namespace + setId, { staticPolicies });
    if (answer.type === 'failure') throw invalidPolicy(`policy set ${setId}`, answer.errors);
    this.sets.set(setId, entry);
    return { policyIds: entry.policyIds, inputIndependent: entry.inputIndependent };
  }

  /** The annotations (`@id`, `@reason`, …) of a policy of a prepared set. */
  annotations(setId: string, policyId: string): Readonly<Record<string, string>> {
    return this.sets.get(setId)?.annotations.get(policyId) ?? {};
  }

  /**
   * Decides `request` against the prepared set `setId`. Default deny: allow only when a permit
   * matches and no forbid does. A forbid policy that fails to evaluate (say, it compares an input
   * string with a number) denies, so a broken forbid never lets a call through; a failing permit
   * simply does not permit. Never throws for a request.
   * @throws IllegalStateError when `setId` was never prepared (a bug).
   */
  authorize(setId: string, request: PolicyRequest): AuthorizationResult {
    const entry = this.sets.get(setId);
    if (!entry) throw new IllegalStateError(`policy set ${setId} was never prepared`);
    const answer = this.guarded<ReturnType<Cedar['statefulIsAuthorized']>>(
      (cedar) => {
        try {
          return cedar.statefulIsAuthorized({
            ...toCedarRequest(request, {
              input: !entry.inputIndependent,
              entities: entry.readsEntities,
            }),
            preparsedPolicySetId: this.namespace + setId,
            validateRequest: false,
          });
        } catch (err) {
          if (isWasmTrap(err)) throw err;
          // Cedar throws (rather than answers) on a request it cannot read, e.g. an input nested
          // past its JSON recursion limit (128): that request is denied, not failed.
          return refused(`Cedar could not read it: ${(err as Error).message}`);
        }
      },
      () => refused('Cedar failed while evaluating it (and was restarted)'),
    );
    if (answer.type === 'failure') {
      const errors = answer.errors.map((e) => `request: ${e.message}`);
      return { decision: 'deny', determiningPolicies: [], errors, failedForbids: [] };
    }
    const { decision, diagnostics } = answer.response;
    const errors = diagnostics.errors.map((e) => `${e.policyId}: ${e.error.message}`);
    const failedForbids = diagnostics.errors
      .map((e) => e.policyId)
      .filter((id) => entry.effects.get(id) === 'forbid');
    if (failedForbids.length > 0) {
      const matched = decision === 'deny' ? diagnostics.reason : [];
      return {
        decision: 'deny',
        determiningPolicies: [...matched, ...failedForbids],
        errors,
        failedForbids,
      };
    }
    return { decision, determiningPolicies: diagnostics.reason, errors, failedForbids };
  }

  /**
   * Runs `fn` on this engine's Cedar instance. After a WebAssembly trap the instance is replaced,
   * every prepared set is prepared in the new one (a set that cannot be is dropped: calls on it
   * then fail as never prepared), and `onTrap` answers instead.
   */
  private guarded<T>(fn: (cedar: Cedar) => T, onTrap: () => T): T {
    try {
      return fn(this.cedar);
    } catch (err) {
      if (!isWasmTrap(err)) throw err;
      this.replaceInstance();
      return onTrap();
    }
  }

  private replaceInstance(): void {
    this.cedar = loadCedar();
    this.made += 1;
    for (const [setId, entry] of [...this.sets]) {
      try {
        const answer = this.cedar.preparsePolicySet(this.namespace + setId, {
          staticPolicies: entry.policies,
        });
        if (answer.type === 'failure') this.sets.delete(setId);
      } catch (err) {
        if (!isWasmTrap(err)) throw err;
        this.sets.delete(setId);
        this.cedar = loadCedar();
        this.made += 1;
      }
    }
  }
}

/**
 * Node 20's V8 (11.3) aborts the whole process ("Fatal error … unreachable code" in
 * Deoptimizer::DoComputeBuiltinContinuation) when optimized code that inlined a JS-to-Wasm call
 * is deoptimized while that call runs, which Cedar's calls back into JavaScript can cause.
 * Reproduced here with ~20k evaluations across two policy sets. Turning that inlining off (for
 * the whole process; nothing else of ours calls WebAssembly) avoids it, at roughly 10 µs per
 * authorization. Newer V8 (13+, untested) is left alone.
 */
/** Cedar's answer shape for a request it could not decide: it is denied with `message`. */
function refused(message: string): ReturnType<Cedar['statefulIsAuthorized']> {
  return {
    type: 'failure',
    errors: [{ message, help: null, code: null, url: null, severity: null }],
    warnings: [],
  };
}

function avoidJsWasmInliningCrash(): void {
  if (Number(process.versions.v8.split('.')[0]) <= 12) {
    setFlagsFromString('--no-turbo-inline-js-wasm-calls');
  }
}

function toValidationError(
  text: string,
  e: DetailedError,
  policyId?: string,
): PolicyValidationError {
  let message = e.message
    .replace(/^failed to parse policies from string: /, '')
    .replace(/^for policy `[^`]*`, /, '')
    .replace(/ for Gatehouse::Action::"[^"]*"/, '');
  const location = e.sourceLocations?.[0];
  if (location?.label) message += `: ${location.label}`;
  if (e.help) message += ` (${e.help})`;
  if (/attribute `input\.[^`]*` in context/.test(message)) {
    message +=
      ' (guard input attributes with `has`, e.g. `context.input has branch && context.input.branch == "main"`)';
  }
  const error: PolicyValidationError = { message };
  if (policyId !== undefined) error.policyId = policyId;
  if (location) Object.assign(error, sourcePosition(text, location.start));
  return error;
}

function duplicateIds(text: string, policies: ParsedPolicy[]): PolicyValidationError[] {
  const seen = new Set<string>();
  const errors: PolicyValidationError[] = [];
  for (const p of policies) {
    if (seen.has(p.id)) {
      const error: PolicyValidationError = {
        message: `another policy already has the id "${p.id}"`,
        policyId: p.id,
      };
      // Cedar gives no position here; the second `@id("…")` with this id is the culprit.
      const at = [...text.matchAll(/@id\s*\(\s*"((?:[^"\\]|\\.)*)"\s*\)/g)].filter(
        (m) => m[1] === p.id,
      )[1];
      if (at)
        Object.assign(error, sourcePosition(text, Buffer.byteLength(text.slice(0, at.index))));
      errors.push(error);
    }
    seen.add(p.id);
  }
  return errors;
}

// Cedar reports a context error once per action the policy may apply to.
function dedupe(errors: PolicyValidationError[]): PolicyValidationError[] {
  const seen = new Set<string>();
  return errors.filter((e) => {
    const key = JSON.stringify([e.policyId, e.line, e.column, e.message]);
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}

function invalidPolicy(what: string, errors: DetailedError[]): GatehouseError {
  const list = errors.map((e) => e.message).join('; ');
  return new GatehouseError(ErrorCode.INVALID_POLICY, `Cannot prepare ${what}: ${list}.`, {
    details: { errors: errors.map((e) => ({ message: e.message })) },
  });
}
