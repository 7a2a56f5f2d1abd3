import { ErrorCode, GatehouseError, isoTime } from '../core/index.js';
import type { Clock, Environment, IdGenerator } from '../core/index.js';
import { AccessTokens } from './access-tokens.js';
import type { Authentication } from './access-tokens.js';
import type { TokenInfo } from './access-token.js';
import type { Principal, Role } from './principal.js';
import type { StoredPrincipal, Tenant, TenancyStore } from './tenancy-store.js';
import { DEFAULT_TOKEN_TTL_MS } from './token-ttl.js';

/** Options of {@link Directory.open}. */
export interface DirectoryOptions {
  store: TenancyStore;
  clock: Clock;
  ids: IdGenerator;
  /** How long a new token lives when its maker does not say (default 90 days). */
  tokenTtlMs?: number;
}

/** What to create a principal with. */
export interface NewPrincipal {
  tenant: string;
  name: string;
  roles: Role[];
  project?: string;
  agent?: { id: string; version: string };
}

/** How the first token of a new principal is made. */
export interface FirstToken {
  /** The secret (for seeding); otherwise a random one is made. */
  secret?: string;
  /** A duration (`90d`) or an ISO 8601 expiry; default: the configured lifetime. */
  ttl?: string;
  expiresAt?: string;
  label?: string;
}

/**
 * Tenants, projects, environments, principals and their bearer tokens, cached in memory for the
 * hot path. Tokens are random 256-bit secrets shown once at creation; only their SHA-256 is stored.
 */
export class Directory {
  private readonly tenants = new Map<string, Tenant>();
  private readonly projects = new Set<string>();
  private readonly environments = new Map<string, Environment>();
  private readonly principals = new Map<string, StoredPrincipal>();
  /** The principals' bearer tokens: made, listed, revoked, rotated, watched. */
  readonly tokens: AccessTokens;

  private constructor(private readonly options: DirectoryOptions) {
    this.tokens = new AccessTokens({
      store: options.store,
      clock: options.clock,
      ids: options.ids,
      defaultTtlMs: options.tokenTtlMs ?? DEFAULT_TOKEN_TTL_MS,
      principal: (id) => this.principals.get(id),
    });
  }

  /** Loads the directory from its store. */
  static async open(options: DirectoryOptions): Promise<Directory> {
    const d = new Directory(options);
    const all = await options.store.loadAll();
    for (const t of all.tenants) d.tenants.set(t.id, t);
    for (const p of all.projects) d.projects.add(`${p.tenant}\u0000${p.id}`);
    for (const e of all.environments) d.environments.set(envKey(e.tenant, e.project, e.name), e);
    for (const p of all.principals) d.principals.set(p.id, p);
    d.tokens.load(all.tokens);
    return d;
  }

  /** The principal an active bearer token belongs to, or undefined. */
  authenticate(token: string): Principal | undefined {
    const a = this.tokens.verify(token);
    return a.ok ? a.principal : undefined;
  }

  /** What a bearer token proves now, or why it proves nothing. */
  verify(token: string): Authentication {
    return this.tokens.verify(token);
  }

  /** The principals of a tenant, by name. */
  principalsOf(tenant: string): StoredPrincipal[] {
    return [...this.principals.values()]
      .filter((p) => p.tenant === tenant)
      .sort((a, b) => a.name.localeCompare(b.name) || a.id.localeCompare(b.id));
  }

  /** The tenant, or undefined. */
  tenant(id: string): Tenant | undefined {
    return this.tenants.get(id);
  }

  /** True when the project exists in the tenant. */
  hasProject(tenant: string, project: string): boolean {
    return this.projects.has(`${tenant}\u0000${project}`);
  }

  /** The environment, or undefined. */
  environment(tenant: string, project: string, name: string): Environment | undefined {
    return this.environments.get(envKey(tenant, project, name));
  }

  /** The environments of a project, by name. */
  environmentsOf(tenant: string, project: string): Environment[] {
    return [...this.environments.values()]
      .filter((e) => e.tenant === tenant && e.project === project)
      .sort((a, b) => a.name.localeCompare(b.name));
  }

  /** Creates a tenant unless it exists. Safe to repeat. */
  async ensureTenant(id: string, name: string, actor: string): Promise<Tenant> {
    checkName('tenant', id);
    const existing = this.tenants.get(id);
    if (existing) return existing;
    const at = isoTime(this.options.clock.now());
    const t: Tenant = { id, name, createdAt: at };
    await this.options.store.addTenant(t, {
      audit: [
        { tenant: id, type: 'tenant.created', subject: `tenant/${id}`, at, actor, data: { name } },
      ],
      events: [],
    });
    this.tenants.set(id, t);
    return t;
  }

  /** Creates a project unless it exists. Safe to repeat. */
  async ensureProject(tenant: string, id: string, actor: string): Promise<void> {
    checkName('project', id);
    this.requireTenant(tenant);
    if (this.hasProject(tenant, id)) return;
    const at = isoTime(this.options.clock.now());
    await this.options.store.addProject(
      { tenant, id, createdAt: at },
      {
        audit: [{ tenant, type: 'project.created', subject: `project/${id}`, at, actor, data: {} }],
        events: [],
      },
    );
    this.projects.add(`${tenant}\u0000${id}`);
  }

  /** Creates or replaces an environment. */
  async putEnvironment(e: Environment, actor: string): Promise<void> {
    checkName('environment', e.name);
    if (!this.hasProject(e.tenant, e.project)) {
      throw new GatehouseError(
        ErrorCode.NOT_FOUND,
        `Project ${JSON.stringify(e.project)} does not exist in tenant ${e.tenant}.`,
      );
    }
    const at = isoTime(this.options.clock.now());
    await this.options.store.putEnvironment(e, {
      audit: [
        {
          tenant: e.tenant,
          type: 'environment.put',
          subject: `environment/${e.project}/${e.name}`,
          at,
          actor,
          data: { class: e.class, frozen: e.frozen },
        },
      ],
      events: [],
    });
    this.environments.set(envKey(e.tenant, e.project, e.name), e);
  }

  /**
   * Creates a principal with its first bearer token, and returns both with the token's secret,
   * which is never shown again. An agent is an agent only: the agent role is not combined with
   * another (people govern agents; one principal cannot be both).
   * @throws GatehouseError NOT_FOUND (tenant), INVALID_INPUT (roles, ttl or expiry).
   */
  async addPrincipal(
    p: NewPrincipal,
    actor: string,
    first: FirstToken = {},
  ): Promise<{ principal: Principal; token: string; tokenInfo: TokenInfo }> {
    this.requireTenant(p.tenant);
    if (p.roles.includes('agent') && p.roles.length > 1)
      throw new GatehouseError(
        ErrorCode.INVALID_INPUT,
        `An agent principal holds the agent role only; got ${p.roles.join(', ')}. Make one principal per role a person or an agent plays.`,
        { details: { pointer: '/roles' } },
      );
    const at = isoTime(this.options.clock.now());
    const stored: StoredPrincipal = {
      id: this.options.ids.next(),
      tenant: p.tenant,
      name: p.name,
      roles: p.roles,
      project: p.project ?? null,
      agent: p.agent ?? null,
      createdAt: at,
    };
    const token = this.tokens.draft(
      { tenant: p.tenant, principal: stored.id },
      {
        ...(first.ttl !== undefined ? { ttl: first.ttl } : {}),
        ...(first.expiresAt !== undefined ? { expiresAt: first.expiresAt } : {}),
        ...(first.label !== undefined ? { label: first.label } : {}),
      },
      actor,
      first.secret,
    );
    await this.options.store.addPrincipal(stored, token.stored, {
      audit: [
        {
          tenant: p.tenant,
          type: 'principal.created',
          subject: `principal/${stored.id}`,
          at,
          actor,
          data: {
            name: p.name,
            roles: p.roles,
            project: stored.project,
            agent: stored.agent,
            token: { id: token.stored.id, expiresAt: token.stored.expiresAt },
          },
        },
      ],
      events: [],
    });
    this.principals.set(stored.id, stored);
    this.tokens.remember(token.stored);
    const { createdAt: _at, ...principal } = stored;
    return {
      principal,
      token: token.secret,
      tokenInfo: this.tokens.get(p.tenant, token.stored.id, null),
    };
  }

  private requireTenant(id: string): void {
    if (!this.tenants.has(id))
      throw new GatehouseError(ErrorCode.NOT_FOUND, `Tenant ${JSON.stringify(id)} does not exist.`);
  }
}

function envKey(tenant: string, project: string, name: string): string {
  return `${tenant}\u0000${project}\u0000${name}`;
}

const NAME = /^[a-z0-9][a-z0-9._-]{0,62}$/;

function checkName(what: string, name: string): void {
  if (!NAME.test(name)) {
    throw new GatehouseError(
      ErrorCode.INVALID_INPUT,
      `A ${what} name must be 1–63 characters of a–z, 0–9, '.', '_' or '-', starting with a letter or digit; got ${JSON.stringify(name)}.`,
    );
  }
}
