import { sql } from 'kysely';
import type { Kysely, Migration } from 'kysely';

/**
 * `mcp_stream_events` (PostgreSQL only): the events sent on the agents' MCP sessions' streams,
 * each with a rising `seq` (the event id the client gets), kept within per-session bounds for a
 * while, so a client may resume a dropped stream (`Last-Event-ID`) on whichever node it lands.
 */
export function mcpStreamEvents(): Migration {
  return {
    async up(db: Kysely<unknown>) {
      await db.schema
        .createTable('mcp_stream_events')
        .addColumn('seq', 'bigserial', (c) => c.primaryKey())
        .addColumn('session_id', 'text', (c) => c.notNull())
        .addColumn('stream_id', 'text', (c) => c.notNull())
        .addColumn('message', 'text', (c) => c.notNull())
        .addColumn('bytes', 'integer', (c) => c.notNull())
        .addColumn('created_ms', 'bigint', (c) => c.notNull())
        .execute();
      await sql`create index mcp_stream_events_session on mcp_stream_events (session_id, seq)`.execute(
        db,
      );
      await sql`create index mcp_stream_events_age on mcp_stream_events (created_ms)`.execute(db);
    },
  };
}
