import { ErrorCode, GatehouseError } from '../../core/index.js';
import type { AuditRecordDraft } from '../../core/index.js';
import type { PolicyStore, StoredPolicy } from '../../policy/index.js';
import { appendLedger } from './sqlite-ledger.js';
import type { SqliteDatabase } from './sqlite-database.js';

// The tenant-wide policy is stored with project '' so that (tenant, project) can be the key.
const TENANT_SCOPE = '';

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
      const current = row ? Number(row.version) : 0;
      if (p.version !== current + 1) {
        throw new GatehouseError(
          ErrorCode.CONFLICT,
          `The policy of ${scopeName(p)} is at version ${current}; version ${p.version} cannot follow it. Read it again and retry.`,
          { details: { currentVersion: current } },
        );
      }
      const values = {
        tenant: p.tenant,
        project,
        text: p.text,
        version: p.version,
        updated_at: p.updatedAt,
      };
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

function toPolicy(r: {
  tenant: string;
  project: string;
  text: string;
  version: number;
  updated_at: string;
}): StoredPolicy {
  return {
    tenant: r.tenant,
    project: r.project === TENANT_SCOPE ? null : r.project,
    text: r.text,
    version: Number(r.version),
    updatedAt: r.updated_at,
  };
}

function scopeName(p: { tenant: string; project: string | null }): string {
  return p.project === null ? `tenant ${p.tenant}` : `project ${p.project} of tenant ${p.tenant}`;
}
