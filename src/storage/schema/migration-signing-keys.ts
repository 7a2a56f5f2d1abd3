import { sql } from 'kysely';
import type { Kysely, Migration } from 'kysely';

/**
 * The signing keys of receipts and checkpoints, for PostgreSQL: shared by every node of the
 * database, each private key sealed under the master key (JSON of the sealed value, dropped once
 * the key is retired). A partial unique index lets at most one key be active.
 */
export function signingKeys(): Migration {
  return {
    async up(db: Kysely<unknown>) {
      await db.schema
        .createTable('signing_keys')
        .addColumn('kid', 'text', (c) => c.primaryKey())
        .addColumn('x', 'text', (c) => c.notNull())
        .addColumn('created_at', 'text', (c) => c.notNull())
        .addColumn('retired_at', 'text')
        .addColumn('sealed', 'text')
        .execute();
      await sql`create unique index signing_keys_one_active on signing_keys ((retired_at is null))
        where retired_at is null`.execute(db);
    },
  };
}
