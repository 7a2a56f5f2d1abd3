import type { Environment, LedgerEntries } from '../../core/index.js';
import type { StoredPrincipal, StoredToken, Tenant, TenancyStore } from '../../tenancy/index.js';
import {
  environmentRow,
  principalRow,
  toEnvironment,
  toPrincipal,
  toTenant,
  toToken,
  tokenRow,
} from '../sql/tenancy-rows.js';
import { appendLedger } from './postgres-ledger.js';
import type { PostgresDatabase } from './postgres-database.js';

/** {@link TenancyStore} on PostgreSQL. */
export class PostgresTenancyStore implements TenancyStore {
  constructor(private readonly db: PostgresDatabase) {}

  async loadAll(): ReturnType<TenancyStore['loadAll']> {
    const k = this.db.kysely;
    const [tenants, projects, environments, principals, tokens] = await Promise.all([
      k.selectFrom('tenants').selectAll().execute(),
      k.selectFrom('projects').select(['tenant', 'id']).execute(),
      k.selectFrom('environments').selectAll().execute(),
      k.selectFrom('principals').selectAll().execute(),
      k.selectFrom('tokens').selectAll().execute(),
    ]);
    return {
      tenants: tenants.map(toTenant),
      projects,
      environments: environments.map(toEnvironment),
      principals: principals.map(toPrincipal),
      tokens: tokens.map(toToken),
    };
  }

  addTenant(t: Tenant, ledger: LedgerEntries): Promise<void> {
    return this.db.write(async (tx) => {
      await tx
        .insertInto('tenants')
        .values({ id: t.id, name: t.name, created_at: t.createdAt })
        .execute();
      await appendLedger(tx, ledger);
    });
  }

  addProject(
    p: { tenant: string; id: string; createdAt: string },
    ledger: LedgerEntries,
  ): Promise<void> {
    return this.db.write(async (tx) => {
      await tx
        .insertInto('projects')
        .values({ tenant: p.tenant, id: p.id, created_at: p.createdAt })
        .execute();
      await appendLedger(tx, ledger);
    });
  }

  putEnvironment(e: Environment, ledger: LedgerEntries): Promise<void> {
    return this.db.write(async (tx) => {
      const row = environmentRow(e);
      await tx
        .insertInto('environments')
        .values(row)
        .onConflict((oc) =>
          oc
            .columns(['tenant', 'project', 'name'])
            .doUpdateSet({ class: row.class, frozen: row.frozen }),
        )
        .execute();
      await appendLedger(tx, ledger);
    });
  }

  addPrincipal(p: StoredPrincipal, token: StoredToken, ledger: LedgerEntries): Promise<void> {
    return this.db.write(async (tx) => {
      await tx.insertInto('principals').values(principalRow(p)).execute();
      await tx.insertInto('tokens').values(tokenRow(token)).execute();
      await appendLedger(tx, ledger);
    });
  }

  putTokens(tokens: StoredToken[], ledger: LedgerEntries): Promise<void> {
    return this.db.write(async (tx) => {
      for (const t of tokens) {
        const row = tokenRow(t);
        const { id: _id, ...changes } = row;
        await tx
          .insertInto('tokens')
          .values(row)
          .onConflict((oc) => oc.column('id').doUpdateSet(changes))
          .execute();
      }
      await appendLedger(tx, ledger);
    });
  }

  async touchTokens(uses: { id: string; lastUsedAt: string }[]): Promise<void> {
    if (uses.length === 0) return;
    await this.db.write(async (tx) => {
      for (const u of uses) {
        await tx
          .updateTable('tokens')
          .set({ last_used_at: u.lastUsedAt })
          .where('id', '=', u.id)
          .execute();
      }
    });
  }
}
