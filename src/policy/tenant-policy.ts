import { randomUUID } from 'node:crypto';
import { ErrorCode, GatehouseError, IllegalStateError, isoTime, sha256Hex } from '../core/index.js';
import type { Clock } from '../core/index.js';
import type { AuthorizationResult, CedarEngine, PolicyValidationError } from './cedar-engine.js';
import { defaultTenantPolicy } from './default-tenant-policy.js';
import type { PolicyDecision, PolicyRequest } from './policy-request.js';
import type { PolicyStore, StoredPolicy } from './policy-store.js';

/** Collaborators of {@link TenantPolicy}. */
export interface TenantPolicyOptions {
  store: PolicyStore;
  engine: CedarEngine;
  clock: Clock;
  /** Most decisions kept in the decision cache; it is emptied when full. Default 10 000. */
  cacheSize?: number;
}

/** A scope's current policy text. */
export interface PolicyText {
  text: string;
  version: number;
  updatedAt: string;
}

/** What {@link TenantPolicy.replace} stored. */
export interface PolicyReplacement {
  version: number;
  policyIds: string[];
}

/** The most a policy text may weigh, in UTF-16 code units. */
const MAX_POLICY_TEXT = 256 * 1024;

interface Scope {
  setId: string;
  tenant: string;
  /** `<tenant version>.<project version>`, 0 for a scope with no stored text. */
  version: string;
  inputIndependent: boolean;
}

/**
 * Tenant policy (DESIGN §3 stage 3): each tenant's Cedar policy, and each project's, evaluated
 * together, so a call runs only when some policy of either permits it and none forbids it.
 * Decision ids say which scope decided (`tenant:<id>`, `project:<id>`). A tenant with no stored
 * policy is under {@link defaultTenantPolicy}.
 *
 * Every text lives in memory after {@link load}; {@link evaluate} is synchronous and never reads
 * the store. Decisions are cached only while the combined set of a scope provably ignores the
 * call's input. Replacements made by another process are seen after the next {@link load}.
 */
export class TenantPolicy {
  private readonly store: PolicyStore;
  private readonly engine: CedarEngine;
  private readonly clock: Clock;
  private readonly cacheSize: number;
  /** Keeps this instance's preparsed sets apart from others' in the shared Cedar instance. */
  private readonly setPrefix = `tenant-policy/${randomUUID()}/`;
  private readonly texts = new Map<string, StoredPolicy>();
  private readonly scopes = new Map<string, Scope>();
  private readonly cache = new Map<string, Omit<PolicyDecision, 'cached'>>();
  private loaded = false;

  constructor(options: TenantPolicyOptions) {
    this.store = options.store;
    this.engine = options.engine;
    this.clock = options.clock;
    this.cacheSize = options.cacheSize ?? 10_000;
  }

  /**
   * Reads every stored policy and preparses every combined set. Safe to repeat (a reload).
   * @throws GatehouseError INVALID_POLICY when a stored text no longer parses.
   */
  async load(): Promise<void> {
    const stored = await this.store.list();
    this.texts.clear();
    this.scopes.clear();
    this.cache.clear();
    for (const p of stored) this.texts.set(scopeKey(p.tenant, p.project), p);
    for (const p of stored) this.scope(p.tenant, p.project);
    this.scope('', null);
    this.loaded = true;
  }

  /** The stored policy of a tenant (no `project`) or of one of its projects; undefined when none. */
  async read(tenant: string, project?: string): Promise<PolicyText | undefined> {
    const p = await this.store.get(tenant, project ?? null);
    return p && { text: p.text, version: p.version, updatedAt: p.updatedAt };
  }

  /**
   * Validates `text` against the Gatehouse schema, then stores it as the policy of the tenant (no
   * `project`) or of one project, with an audit record naming `actor`, and applies it to the next
   * evaluation. Not idempotent: each call makes a new version.
   * @throws GatehouseError INVALID_POLICY, changing nothing, with every error and its line in the
   * message and `details.errors`; CONFLICT when another replacement won the race.
   */
  async replace(
    tenant: string,
    project: string | undefined,
    text: string,
    actor: string,
  ): Promise<PolicyReplacement> {
    const where = scopeName(tenant, project ?? null);
    if (!tenant || project === '') {
      throw new GatehouseError(
        ErrorCode.INVALID_INPUT,
        'A tenant (and, if given, a project) must be named.',
      );
    }
    const validation =
      text.length > MAX_POLICY_TEXT
        ? {
            ok: false as const,
            errors: [{ message: `the text is longer than ${MAX_POLICY_TEXT} characters` }],
          }
        : this.engine.validatePolicies(text);
    if (!validation.ok) {
      const list = validation.errors.map(describeError).join('; ');
      throw new GatehouseError(
        ErrorCode.INVALID_POLICY,
        `The policy for ${where} is invalid, nothing was changed: ${list}.`,
        { details: { errors: validation.errors } },
      );
    }
    const current = await this.store.get(tenant, project ?? null);
    const stored: StoredPolicy = {
      tenant,
      project: project ?? null,
      text,
      version: (current?.version ?? 0) + 1,
      updatedAt: isoTime(this.clock.now()),
    };
    await this.store.put(stored, {
      tenant,
      type: 'policy.replaced',
      subject: project === undefined ? `policy/${tenant}` : `policy/${tenant}/${project}`,
      at: stored.updatedAt,
      actor,
      data: {
        project: stored.project,
        version: stored.version,
        previousVersion: current?.version ?? null,
        policyIds: validation.policyIds,
        sha256: sha256Hex(text),
        text,
      },
    });
    this.install(stored);
    return { version: stored.version, policyIds: validation.policyIds };
  }

  /**
   * Decides one call against the tenant's and the project's policies together. Synchronous (the
   * hot path); a denial is a value. Default deny.
   * @throws IllegalStateError when called before {@link load} (a bug).
   */
  evaluate(req: PolicyRequest): PolicyDecision {
    if (!this.loaded) throw new IllegalStateError('TenantPolicy.evaluate called before load()');
    const scope = this.scope(req.tenant, req.project);
    const key = scope.inputIndependent ? cacheKey(scope, req) : undefined;
    if (key !== undefined) {
      const hit = this.cache.get(key);
      if (hit) return { ...hit, determiningPolicies: [...hit.determiningPolicies], cached: true };
    }
    const result = this.engine.authorize(scope.setId, req);
    const decision = {
      decision: result.decision,
      determiningPolicies: result.determiningPolicies,
      reason: this.reason(scope, req, result),
    };
    if (key !== undefined) {
      if (this.cache.size >= this.cacheSize) this.cache.clear();
      this.cache.set(key, decision);
    }
    return { ...decision, determiningPolicies: [...decision.determiningPolicies], cached: false };
  }

  private install(p: StoredPolicy): void {
    const key = scopeKey(p.tenant, p.project);
    if ((this.texts.get(key)?.version ?? 0) >= p.version) return; // a newer one is already here
    this.texts.set(key, p);
    for (const [setId, scope] of this.scopes) {
      if (scope.tenant === p.tenant) this.scopes.delete(setId);
    }
    this.cache.clear();
  }

  /** The prepared combined set that governs a project (or, `project` null, the tenant alone). */
  private scope(tenant: string, project: string | null): Scope {
    const projectPolicy = project === null ? undefined : this.texts.get(scopeKey(tenant, project));
    const tenantPolicy = this.texts.get(scopeKey(tenant, null));
    const setId =
      this.setPrefix +
      (projectPolicy
        ? scopeKey(tenant, project)
        : tenantPolicy
          ? scopeKey(tenant, null)
          : 'default');
    const existing = this.scopes.get(setId);
    if (existing) return existing;
    const sources: Record<string, string> = { tenant: tenantPolicy?.text ?? defaultTenantPolicy() };
    if (projectPolicy) sources['project'] = projectPolicy.text;
    const prepared = this.engine.prepare(setId, sources);
    const scope: Scope = {
      setId,
      tenant: tenantPolicy || projectPolicy ? tenant : '',
      version: `${tenantPolicy?.version ?? 0}.${projectPolicy?.version ?? 0}`,
      inputIndependent: prepared.inputIndependent,
    };
    this.scopes.set(setId, scope);
    return scope;
  }

  private reason(scope: Scope, req: PolicyRequest, result: AuthorizationResult): string {
    const action = req.action ?? 'invoke';
    const tool = `${req.tool.id}@${req.tool.version}`;
    const agent = `${req.agent.id}@${req.agent.version}`;
    const env = `environment ${req.environment.name}`;
    const ids = result.determiningPolicies;
    if (result.decision === 'allow') {
      return action === 'invoke'
        ? `${policies(ids)} ${ids.length > 1 ? 'permit' : 'permits'} agent ${agent} to invoke ${tool} in ${env}.`
        : `${policies(ids)} ${ids.length > 1 ? 'permit' : 'permits'} ${tool} (effective class ${req.effectiveClass}) to run unattended in ${env}.`;
    }
    if (result.failedForbids.length > 0) {
      return (
        `Denied because ${policies(result.failedForbids, 'policy')} could not be evaluated for this call ` +
        `(${result.errors.join('; ')}), and a forbid policy that fails denies. ` +
        `Fix the policy, or the input attribute it reads.`
      );
    }
    if (ids.length > 0) {
      const why = ids
        .map((id) => this.engine.annotations(scope.setId, id)['reason'])
        .filter((r): r is string => r !== undefined);
      const because = why.length > 0 ? ` (${why.join('; ')})` : '';
      return action === 'invoke'
        ? `${policies(ids)} ${ids.length > 1 ? 'forbid' : 'forbids'} agent ${agent} from invoking ${tool} in ${env}${because}. Change the call, or ask a platform admin to change the policy.`
        : `${policies(ids)} ${ids.length > 1 ? 'forbid' : 'forbids'} ${tool} (effective class ${req.effectiveClass}) to run unattended in ${env}${because}, so the call needs approval.`;
    }
    const errors =
      result.errors.length > 0 ? ` Evaluation errors: ${result.errors.join('; ')}.` : '';
    return action === 'invoke'
      ? `No policy of tenant ${req.tenant} or project ${req.project} permits agent ${agent} to invoke ${tool} in ${env}, so it is denied by default. Ask a platform admin to add a permit policy.${errors}`
      : `No policy of tenant ${req.tenant} or project ${req.project} permits ${tool} (effective class ${req.effectiveClass}) to run unattended in ${env}, so the call needs approval.${errors}`;
  }
}

function cacheKey(scope: Scope, req: PolicyRequest): string {
  const e = req.environment;
  const t = req.tool;
  return JSON.stringify([
    scope.setId,
    scope.version,
    req.action ?? 'invoke',
    req.tenant,
    req.project,
    e.name,
    e.class,
    e.frozen,
    req.agent.id,
    req.agent.version,
    t.id,
    t.version,
    t.kind,
    t.declaredClass,
    req.effectiveClass,
  ]);
}

function scopeKey(tenant: string, project: string | null): string {
  return JSON.stringify([tenant, project]);
}

function scopeName(tenant: string, project: string | null): string {
  return project === null ? `tenant ${tenant}` : `project ${project} of tenant ${tenant}`;
}

function policies(ids: string[], word = 'Policy'): string {
  return ids.length === 1 ? `${word} ${ids[0]}` : `${word.replace(/y$/, 'ies')} ${ids.join(', ')}`;
}

function describeError(e: PolicyValidationError): string {
  const where = e.line === undefined ? '' : `line ${e.line}, column ${e.column ?? 1}`;
  const policy = e.policyId === undefined ? '' : `policy ${e.policyId}`;
  const prefix = [where, policy].filter(Boolean).join(', ');
  return prefix ? `${prefix}: ${e.message}` : e.message;
}
