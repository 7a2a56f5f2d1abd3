import type { McpSessionStore, StoredMcpSession } from '../../tenancy/index.js';
import type { PostgresDatabase } from './postgres-database.js';

/** {@link McpSessionStore} on PostgreSQL: one row per open session, shared by every node. */
export class PostgresMcpSessionStore implements McpSessionStore {
  constructor(private readonly db: PostgresDatabase) {}

  async put(session: StoredMcpSession): Promise<void> {
    await this.db.write((tx) =>
      tx
        .insertInto('mcp_sessions')
        .values({
          id: session.id,
          tenant: session.tenant,
          principal: session.principal,
          token_id: session.tokenId,
          initialize: JSON.stringify(session.initialize),
          created_at: session.createdAt,
        })
        .onConflict((oc) => oc.column('id').doNothing())
        .execute(),
    );
  }

  async get(id: string): Promise<StoredMcpSession | undefined> {
    const row = await this.db.kysely
      .selectFrom('mcp_sessions')
      .selectAll()
      .where('id', '=', id)
      .executeTakeFirst();
    return (
      row && {
        id: row.id,
        tenant: row.tenant,
        principal: row.principal,
        tokenId: row.token_id,
        initialize: JSON.parse(row.initialize) as unknown,
        createdAt: row.created_at,
      }
    );
  }

  async delete(id: string): Promise<void> {
    await this.db.write((tx) => tx.deleteFrom('mcp_sessions').where('id', '=', id).execute());
  }
}
