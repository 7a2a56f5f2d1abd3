import { ErrorCode, GatehouseError } from '../../core/index.js';
import type { AuditRecordDraft } from '../../core/index.js';
import type {
  SecretMetadata,
  SecretPutOptions,
  SecretStore,
  StoredSecret,
} from '../../secrets/index.js';
import type { Tables } from '../schema/tables.js';
import { appendAuditRecords, appendLedger } from './sqlite-ledger.js';
import type { SqliteDatabase } from './sqlite-database.js';

type SecretRow = Tables['secrets'];

/** {@link SecretStore} on SQLite: one row per version, deleted versions kept as tombstones. */
export class SqliteSecretStore implements SecretStore {
  constructor(private readonly db: SqliteDatabase) {}

  put(
    secret: StoredSecret,
    audit: AuditRecordDraft,
    options: SecretPutOptions = {},
  ): Promise<void> {
    return this.db.write(() => {
      // Read inside the write transaction: no other write can interleave before the insert.
      const top = this.top(secret.tenant, secret.name);
      if (secret.version !== top + 1) {
        throw new GatehouseError(
          ErrorCode.CONFLICT,
          `Secret ${secret.name} is at version ${top}; version ${secret.version} cannot follow it. Retry.`,
          { details: { currentVersion: top } },
        );
      }
      if (options.replaces !== undefined) {
        const live = this.latestRow(secret.tenant, secret.name);
        if (live?.version !== options.replaces) {
          throw new GatehouseError(
            ErrorCode.CONFLICT,
            `Secret ${secret.name} changed while it was being rotated (it is ${live ? `at version ${live.version}` : 'deleted'}). Retry.`,
          );
        }
      }
      this.db.run(
        this.db.kysely.insertInto('secrets').values({
          tenant: secret.tenant,
          name: secret.name,
          version: secret.version,
          scopes: JSON.stringify(secret.scopes),
          ciphertext: secret.sealed.ciphertext,
          iv: secret.sealed.iv,
          tag: secret.sealed.tag,
          key_id: secret.sealed.keyId,
          created_at: secret.createdAt,
          deleted_at: null,
        }),
      );
      appendLedger(this.db, { audit: [audit], events: [] });
    });
  }

  latest(tenant: string, name: string): Promise<StoredSecret | undefined> {
    const row = this.latestRow(tenant, name);
    return Promise.resolve(row && toStored(row));
  }

  topVersion(tenant: string, name: string): Promise<number> {
    return Promise.resolve(this.top(tenant, name));
  }

  list(tenant: string): Promise<SecretMetadata[]> {
    const k = this.db.kysely;
    const rows = this.db.all(
      k
        .selectFrom('secrets as s')
        .select(['s.name', 's.version', 's.scopes', 's.created_at'])
        .where('s.tenant', '=', tenant)
        .where('s.deleted_at', 'is', null)
        .where((eb) =>
          eb.not(
            eb.exists(
              eb
                .selectFrom('secrets as n')
                .select('n.version')
                .whereRef('n.tenant', '=', 's.tenant')
                .whereRef('n.name', '=', 's.name')
                .where('n.deleted_at', 'is', null)
                .whereRef('n.version', '>', 's.version'),
            ),
          ),
        )
        .orderBy('s.name'),
    );
    return Promise.resolve(rows.map(toMetadata));
  }

  delete(tenant: string, name: string, at: string, audit: AuditRecordDraft): Promise<boolean> {
    return this.db.write(() => {
      const changed = this.db.run(
        this.db.kysely
          .updateTable('secrets')
          .set({ deleted_at: at })
          .where('tenant', '=', tenant)
          .where('name', '=', name)
          .where('deleted_at', 'is', null),
      ).changes;
      if (changed === 0) return false;
      appendLedger(this.db, { audit: [audit], events: [] });
      return true;
    });
  }

  appendAudit(records: AuditRecordDraft[]): Promise<void> {
    return appendAuditRecords(this.db, records);
  }

  private top(tenant: string, name: string): number {
    const row = this.db.first(
      this.db.kysely
        .selectFrom('secrets')
        .select((eb) => eb.fn.max('version').as('top'))
        .where('tenant', '=', tenant)
        .where('name', '=', name),
    );
    return row?.top === null || row?.top === undefined ? 0 : Number(row.top);
  }

  private latestRow(tenant: string, name: string): SecretRow | undefined {
    return this.db.first(
      this.db.kysely
        .selectFrom('secrets')
        .selectAll()
        .where('tenant', '=', tenant)
        .where('name', '=', name)
        .where('deleted_at', 'is', null)
        .orderBy('version', 'desc')
        .limit(1),
    );
  }
}

function toMetadata(
  r: Pick<SecretRow, 'name' | 'version' | 'scopes' | 'created_at'>,
): SecretMetadata {
  return {
    name: r.name,
    version: Number(r.version),
    scopes: JSON.parse(r.scopes) as string[],
    createdAt: r.created_at,
  };
}

function toStored(r: SecretRow): StoredSecret {
  return {
    tenant: r.tenant,
    ...toMetadata(r),
    sealed: { ciphertext: r.ciphertext, iv: r.iv, tag: r.tag, keyId: r.key_id },
  };
}
