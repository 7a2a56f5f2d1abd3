import type { SqliteDatabase } from './sqlite-database.js';

/**
 * The largest id stored for an invocation, approval or lease (ids are time-ordered UUIDs), so a
 * gateway's new ids can start above it whatever its clock reads. Undefined for an empty database.
 */
export function latestId(db: SqliteDatabase): string | undefined {
  const row = db.raw
    .prepare(
      `SELECT MAX(id) AS id FROM (
         SELECT MAX(id) AS id FROM invocations
         UNION ALL SELECT MAX(id) FROM approvals
         UNION ALL SELECT MAX(id) FROM leases)`,
    )
    .get() as { id: string | null } | undefined;
  return row?.id ?? undefined;
}
