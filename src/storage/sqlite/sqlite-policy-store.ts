import type { AuditRecordDraft } from '../../core/index.js';
import type { PolicyStore, StoredPolicy } from '../../policy/index.js';
import { TENANT_SCOPE, checkNextPolicyVersion, policyRow, toPolicy } from '../sql/policy-rows.js';
import { appendLedger } from './sqlite-ledger.js';
import type { SqliteDatabase } from './sqlite-database.js';

/** {@link PolicyStore} on SQLite: one row per scope, replaced optimistically by version. */
export class SqlitePolicyStore implements PolicyStore {
  constructor(private readonly db: SqliteDatabase) {}

  get(tenant: string, project: string | null): Promise<StoredPolicy | undefined> {
    const row = this.db.first(
      this.db.kysely
        .selectFrom('policies')
        .selectAll()
        .where('tenant', '=', tenant)
        .where('project', '=', project ?? TENANT_SCOPE),
    );
    return Promise.resolve(row && toPolicy(row));
  }

  put(p: StoredPolicy, audit: AuditRecordDraft): Promise<void> {
    const project = p.project ?? TENANT_SCOPE;
    return this.db.write(() => {
      // Read inside the write transaction: no other write can interleave before the upsert.
      const row = this.db.first(
        this.db.kysely
          .selectFrom('policies')
          .select('version')
          .where('tenant', '=', p.tenant)
          .where('project', '=', project),
      );
      checkNextPolicyVersion(p, row ? Number(row.version) : 0);
      const values = policyRow(p);
      this.db.run(
        this.db.kysely
          .insertInto('policies')
          .values(values)
          .onConflict((oc) =>
            oc.columns(['tenant', 'project']).doUpdateSet({
              text: values.text,
              version: values.version,
              updated_at: values.updated_at,
            }),
          ),
      );
      appendLedger(this.db, { audit: [audit], events: [] });
    });
  }

  list(): Promise<StoredPolicy[]> {
    const rows = this.db.all(
      this.db.kysely.selectFrom('policies').selectAll().orderBy('tenant').orderBy('project'),
    );
    return Promise.resolve(rows.map(toPolicy));
  }
}
