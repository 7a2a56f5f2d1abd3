import { randomBytes } from 'node:crypto';
import { ErrorCode, GatehouseError, isoTime, sha256Hex } from '../core/index.js';
import type { Clock, Environment, IdGenerator } from '../core/index.js';
import type { Principal, Role } from './principal.js';
import type { StoredPrincipal, Tenant, TenancyStore } from './tenancy-store.js';

/** Options of {@link Directory.open}. */
export interface DirectoryOptions {
  store: TenancyStore;
  clock: Clock;
  ids: IdGenerator;
}

/** What to create a principal with. */
export interface NewPrincipal {
  tenant: string;
  name: string;
  roles: Role[];
  project?: string;
  agent?: { id: string; version: string };
}

/**
 * Tenants, projects, environments and principals, cached in memory for the hot path.
 * Tokens are random 256-bit secrets shown once at creation; only their SHA-256 is stored.
 */
export class Directory {
  private readonly tenants = new Map<string, Tenant>();
  private readonly projects = new Set<string>();
  private readonly environments = new Map<string, Environment>();
  private readonly byTokenHash = new Map<string, StoredPrincipal>();

  private constructor(private readonly options: DirectoryOptions) {}

  /** Loads the directory from its store. */
  static async open(options: DirectoryOptions): Promise<Directory> {
    const d = new Directory(options);
    const all = await options.store.loadAll();
    for (const t of all.tenants) d.tenants.set(t.id, t);
    for (const p of all.projects) d.projects.add(`${p.tenant}\u0000${p.id}`);
    for (const e of all.environments) d.environments.set(envKey(e.tenant, e.project, e.name), e);
    for (const p of all.principals) d.byTokenHash.set(p.tokenHash, p);
    return d;
  }

  /** The principal a bearer token belongs to, or undefined. */
  authenticate(token: string): Principal | undefined {
    return this.byTokenHash.get(sha256Hex(token));
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
   * Creates a principal and returns it with its bearer token, which is never shown again.
   * `token` may be given (for seeding); otherwise a random one is made.
   */
  async addPrincipal(
    p: NewPrincipal,
    actor: string,
    token?: string,
  ): Promise<{ principal: Principal; token: string }> {
    this.requireTenant(p.tenant);
    const secret = token ?? `gh_${randomBytes(32).toString('base64url')}`;
    const at = isoTime(this.options.clock.now());
    const stored: StoredPrincipal = {
      id: this.options.ids.next(),
      tenant: p.tenant,
      name: p.name,
      roles: p.roles,
      project: p.project ?? null,
      agent: p.agent ?? null,
      tokenHash: sha256Hex(secret),
      createdAt: at,
    };
    await this.options.store.addPrincipal(stored, {
      audit: [
        {
          tenant: p.tenant,
          type: 'principal.created',
          subject: `principal/${stored.id}`,
          at,
          actor,
          data: { name: p.name, roles: p.roles, project: stored.project, agent: stored.agent },
        },
      ],
      events: [],
    });
    this.byTokenHash.set(stored.tokenHash, stored);
    const { tokenHash: _hash, createdAt: _at, ...principal } = stored;
    return { principal, token: secret };
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
