import { sql } from 'kysely';
import type { PostgresDatabase } from './postgres-database.js';

/**
 * The largest id stored for an invocation, approval or lease (ids are time-ordered UUIDs), so a
 * node's new ids can start above it whatever its clock reads. Undefined for an empty database.
 */
export async function postgresLatestId(db: PostgresDatabase): Promise<string | undefined> {
  const r = await sql<{ id: string | null }>`select max(id) as id from (
      select max(id) as id from invocations
      union all select max(id) from approvals
      union all select max(id) from leases) as ids`.execute(db.kysely);
  return r.rows[0]?.id ?? undefined;
}
