import type { Environment, EnvironmentClass, LedgerEntries } from '../../core/index.js';
import type {
  Role,
  StoredPrincipal,
  StoredToken,
  Tenant,
  TenancyStore,
} from '../../tenancy/index.js';
import type { Tables } from '../schema/tables.js';
import { appendLedger } from './sqlite-ledger.js';
import type { SqliteDatabase } from './sqlite-database.js';

/** {@link TenancyStore} on SQLite. */
export class SqliteTenancyStore implements TenancyStore {
  constructor(private readonly db: SqliteDatabase) {}

  loadAll(): ReturnType<TenancyStore['loadAll']> {
    const k = this.db.kysely;
    const tenants = this.db
      .all(k.selectFrom('tenants').selectAll())
      .map((r): Tenant => ({ id: r.id, name: r.name, createdAt: r.created_at }));
    const projects = this.db.all(k.selectFrom('projects').select(['tenant', 'id']));
    const environments = this.db
      .all(k.selectFrom('environments').selectAll())
      .map((r): Environment => ({
        tenant: r.tenant,
        project: r.project,
        name: r.name,
        class: r.class as EnvironmentClass,
        frozen: r.frozen === 1,
      }));
    const principals = this.db
      .all(k.selectFrom('principals').selectAll())
      .map((r): StoredPrincipal => ({
        id: r.id,
        tenant: r.tenant,
        name: r.name,
        roles: JSON.parse(r.roles) as Role[],
        project: r.project,
        agent:
          r.agent_id !== null && r.agent_version !== null
            ? { id: r.agent_id, version: r.agent_version }
            : null,
        createdAt: r.created_at,
      }));
    const tokens = this.db.all(k.selectFrom('tokens').selectAll()).map((r): StoredToken => ({
      id: r.id,
      tenant: r.tenant,
      principal: r.principal,
      label: r.label,
      hash: r.hash,
      createdAt: r.created_at,
      createdBy: r.created_by,
      expiresAt: r.expires_at,
      revokedAt: r.revoked_at,
      revokedBy: r.revoked_by,
      revokeReason: r.revoke_reason,
      replacedBy: r.replaced_by,
      lastUsedAt: r.last_used_at,
    }));
    return Promise.resolve({ tenants, projects, environments, principals, tokens });
  }

  addTenant(t: Tenant, ledger: LedgerEntries): Promise<void> {
    return this.db.write(() => {
      this.db.run(
        this.db.kysely
          .insertInto('tenants')
          .values({ id: t.id, name: t.name, created_at: t.createdAt }),
      );
      appendLedger(this.db, ledger);
    });
  }

  addProject(
    p: { tenant: string; id: string; createdAt: string },
    ledger: LedgerEntries,
  ): Promise<void> {
    return this.db.write(() => {
      this.db.run(
        this.db.kysely
          .insertInto('projects')
          .values({ tenant: p.tenant, id: p.id, created_at: p.createdAt }),
      );
      appendLedger(this.db, ledger);
    });
  }

  putEnvironment(e: Environment, ledger: LedgerEntries): Promise<void> {
    return this.db.write(() => {
      const row = {
        tenant: e.tenant,
        project: e.project,
        name: e.name,
        class: e.class,
        frozen: e.frozen ? 1 : 0,
      };
      this.db.run(
        this.db.kysely
          .insertInto('environments')
          .values(row)
          .onConflict((oc) =>
            oc
              .columns(['tenant', 'project', 'name'])
              .doUpdateSet({ class: row.class, frozen: row.frozen }),
          ),
      );
      appendLedger(this.db, ledger);
    });
  }

  addPrincipal(p: StoredPrincipal, token: StoredToken, ledger: LedgerEntries): Promise<void> {
    return this.db.write(() => {
      this.db.run(
        this.db.kysely.insertInto('principals').values({
          id: p.id,
          tenant: p.tenant,
          name: p.name,
          roles: JSON.stringify(p.roles),
          project: p.project,
          agent_id: p.agent?.id ?? null,
          agent_version: p.agent?.version ?? null,
          created_at: p.createdAt,
        }),
      );
      this.db.run(this.db.kysely.insertInto('tokens').values(tokenRow(token)));
      appendLedger(this.db, ledger);
    });
  }

  putTokens(tokens: StoredToken[], ledger: LedgerEntries): Promise<void> {
    return this.db.write(() => {
      for (const t of tokens) {
        const row = tokenRow(t);
        const { id: _id, ...changes } = row;
        this.db.run(
          this.db.kysely
            .insertInto('tokens')
            .values(row)
            .onConflict((oc) => oc.column('id').doUpdateSet(changes)),
        );
      }
      appendLedger(this.db, ledger);
    });
  }

  touchTokens(uses: { id: string; lastUsedAt: string }[]): Promise<void> {
    if (uses.length === 0) return Promise.resolve();
    return this.db.write(() => {
      for (const u of uses)
        this.db.runPrepared(
          'token-touch',
          (p) =>
            this.db.kysely
              .updateTable('tokens')
              .set({ last_used_at: p('at') })
              .where('id', '=', p('id')),
          { id: u.id, at: u.lastUsedAt },
        );
    });
  }
}

function tokenRow(t: StoredToken): Tables['tokens'] {
  return {
    id: t.id,
    tenant: t.tenant,
    principal: t.principal,
    label: t.label,
    hash: t.hash,
    created_at: t.createdAt,
    created_by: t.createdBy,
    expires_at: t.expiresAt,
    revoked_at: t.revokedAt,
    revoked_by: t.revokedBy,
    revoke_reason: t.revokeReason,
    replaced_by: t.replacedBy,
    last_used_at: t.lastUsedAt,
  };
}
