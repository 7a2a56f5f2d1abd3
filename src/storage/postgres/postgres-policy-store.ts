import type { AuditRecordDraft } from '../../core/index.js';
import type { PolicyStore, StoredPolicy } from '../../policy/index.js';
import { TENANT_SCOPE, checkNextPolicyVersion, policyRow, toPolicy } from '../sql/policy-rows.js';
import { appendLedger } from './postgres-ledger.js';
import type { PostgresDatabase } from './postgres-database.js';

/** {@link PolicyStore} on PostgreSQL: one row per scope, replaced optimistically by version. */
export class PostgresPolicyStore implements PolicyStore {
  constructor(private readonly db: PostgresDatabase) {}

  async get(tenant: string, project: string | null): Promise<StoredPolicy | undefined> {
    const row = await this.db.kysely
      .selectFrom('policies')
      .selectAll()
      .where('tenant', '=', tenant)
      .where('project', '=', project ?? TENANT_SCOPE)
      .executeTakeFirst();
    return row && toPolicy(row);
  }

  put(p: StoredPolicy, audit: AuditRecordDraft): Promise<void> {
    const row = policyRow(p);
    return this.db.write(async (tx) => {
      // Writes take turns (the database's write lock): nothing changes it before the upsert.
      const current = await tx
        .selectFrom('policies')
        .select('version')
        .where('tenant', '=', row.tenant)
        .where('project', '=', row.project)
        .executeTakeFirst();
      checkNextPolicyVersion(p, current ? Number(current.version) : 0);
      await tx
        .insertInto('policies')
        .values(row)
        .onConflict((oc) =>
          oc.columns(['tenant', 'project']).doUpdateSet({
            text: row.text,
            version: row.version,
            updated_at: row.updated_at,
          }),
        )
        .execute();
      await appendLedger(tx, { audit: [audit], events: [] });
    });
  }

  async list(): Promise<StoredPolicy[]> {
    const rows = await this.db.kysely
      .selectFrom('policies')
      .selectAll()
      .orderBy('tenant')
      .orderBy('project')
      .execute();
    return rows.map(toPolicy);
  }
}
