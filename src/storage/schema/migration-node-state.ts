import { sql } from 'kysely';
import type { Kysely, Migration } from 'kysely';

/**
 * What the nodes of one PostgreSQL database share beyond the stores of SQLite's one gateway:
 * - `signing_keys`: the keys of receipts and checkpoints, each private key sealed under the master
 *   key (JSON of the sealed value, dropped once the key is retired); a partial unique index lets
 *   at most one key be active;
 * - `mcp_sessions`: the agents' MCP sessions, so a request may land on any node.
 */
export function nodeState(): Migration {
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
      await db.schema
        .createTable('mcp_sessions')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('tenant', 'text', (c) => c.notNull())
        .addColumn('principal', 'text', (c) => c.notNull())
        .addColumn('token_id', 'text', (c) => c.notNull())
        .addColumn('initialize', 'text', (c) => c.notNull())
        .addColumn('created_at', 'text', (c) => c.notNull())
        .execute();
    },
  };
}
