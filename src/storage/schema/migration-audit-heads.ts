import { sql } from 'kysely';
import type { Kysely, Migration } from 'kysely';

/**
 * The tree head of each tenant's audit log (its size), for PostgreSQL: an append advances it with
 * an upsert, which holds the row's lock until the transaction ends, so appends of several nodes
 * to one tenant's log take turns and each gets the next indices. Filled from the stored records.
 */
export function auditHeads(): Migration {
  return {
    async up(db: Kysely<unknown>) {
      await db.schema
        .createTable('audit_heads')
        .addColumn('tenant', 'text', (c) => c.primaryKey())
        .addColumn('size', 'bigint', (c) => c.notNull())
        .execute();
      await sql`insert into audit_heads (tenant, size)
        select tenant, max(idx) + 1 from audit_records group by tenant`.execute(db);
    },
  };
}
