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
import { appendLedger } from './sqlite-ledger.js';
import type { SqliteDatabase } from './sqlite-database.js';

/** {@link TenancyStore} on SQLite. */
export class SqliteTenancyStore implements TenancyStore {
  constructor(private readonly db: SqliteDatabase) {}

  loadAll(): ReturnType<TenancyStore['loadAll']> {
    const k = this.db.kysely;
    const tenants = this.db.all(k.selectFrom('tenants').selectAll()).map(toTenant);
    const projects = this.db.all(k.selectFrom('projects').select(['tenant', 'id']));
    const environments = this.db.all(k.selectFrom('environments').selectAll()).map(toEnvironment);
    const principals = this.db.all(k.selectFrom('principals').selectAll()).map(toPrincipal);
    const tokens = this.db.all(k.selectFrom('tokens').selectAll()).map(toToken);
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
      const row = environmentRow(e);
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
      this.db.run(this.db.kysely.insertInto('principals').values(principalRow(p)));
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
