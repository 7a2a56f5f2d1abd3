import { sql } from 'kysely';
import type { Kysely, Migration } from 'kysely';

/** How many invocation rows one step of the backfill reads. */
const BATCH = 500;

/**
 * The lookup columns the invocation list filters by beside status and tool version: the tool id
 * alone, the agent id and the environment, filled from each stored record, with an index on the
 * tenant's newest first (every list is one tenant's, ordered by id).
 */
export function invocationFilters(): Migration {
  return {
    async up(db: Kysely<unknown>) {
      // Idempotent, so a migration stopped half-way (SQLite runs them without a transaction)
      // completes when it runs again.
      const tables = await db.introspection.getTables();
      const have = new Set(
        tables.find((t) => t.name === 'invocations')?.columns.map((c) => c.name) ?? [],
      );
      for (const column of ['tool_name', 'agent_id', 'environment'])
        if (!have.has(column))
          await db.schema.alterTable('invocations').addColumn(column, 'text').execute();
      let after = '';
      for (;;) {
        const rows = await sql<{ id: string; record: string; tool_id: string }>`select id, record,
          tool_id from invocations where id > ${after} order by id limit ${BATCH}`.execute(db);
        for (const row of rows.rows) {
          // A record of an older or partial shape still gets its columns: the tool from the
          // `id@version` column, and empty text for what it does not say.
          const r = JSON.parse(row.record) as {
            tool?: { id?: string };
            agent?: { id?: string };
            environment?: string;
          };
          const tool = r.tool?.id ?? row.tool_id.slice(0, row.tool_id.lastIndexOf('@'));
          await sql`update invocations set tool_name = ${tool}, agent_id = ${r.agent?.id ?? ''},
            environment = ${r.environment ?? ''} where id = ${row.id}`.execute(db);
        }
        const last = rows.rows[rows.rows.length - 1];
        if (!last) break;
        after = last.id;
      }
      await db.schema
        .createIndex('invocations_tenant_id')
        .ifNotExists()
        .on('invocations')
        .columns(['tenant', 'id'])
        .execute();
    },
  };
}
