import { sql } from 'kysely';
import type { SealedKey, SigningKeyStore, StoredSigningKey } from '../../audit/index.js';
import type { PostgresDatabase } from './postgres-database.js';

/** {@link SigningKeyStore} on PostgreSQL: one row per key, shared by every node. */
export class PostgresSigningKeyStore implements SigningKeyStore {
  constructor(private readonly db: PostgresDatabase) {}

  async list(): Promise<StoredSigningKey[]> {
    const rows = await this.db.kysely
      .selectFrom('signing_keys')
      .selectAll()
      .orderBy('created_at')
      .orderBy(sql`retired_at is null`)
      .orderBy('kid')
      .execute();
    return rows.map((r) => ({
      kid: r.kid,
      x: r.x,
      createdAt: r.created_at,
      ...(r.retired_at !== null ? { retiredAt: r.retired_at } : {}),
      ...(r.sealed !== null ? { sealed: JSON.parse(r.sealed) as SealedKey } : {}),
    }));
  }

  addFirst(key: StoredSigningKey): Promise<boolean> {
    // Writes take turns (the database's write lock): no other node adds one between the two.
    return this.db.write(async (tx) => {
      const any = await tx.selectFrom('signing_keys').select('kid').limit(1).executeTakeFirst();
      if (any) return false;
      await tx.insertInto('signing_keys').values(rowOf(key)).execute();
      return true;
    });
  }

  rotate(oldKid: string, fresh: StoredSigningKey, at: string): Promise<boolean> {
    return this.db.write(async (tx) => {
      const retired = await tx
        .updateTable('signing_keys')
        .set({ retired_at: at, sealed: null })
        .where('kid', '=', oldKid)
        .where('retired_at', 'is', null)
        .executeTakeFirst();
      if (Number(retired.numUpdatedRows) === 0) return false;
      await tx.insertInto('signing_keys').values(rowOf(fresh)).execute();
      return true;
    });
  }
}

function rowOf(key: StoredSigningKey) {
  return {
    kid: key.kid,
    x: key.x,
    created_at: key.createdAt,
    retired_at: key.retiredAt ?? null,
    sealed: key.sealed ? JSON.stringify(key.sealed) : null,
  };
}
