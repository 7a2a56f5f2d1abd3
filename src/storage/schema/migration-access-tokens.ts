import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import type { Kysely, Migration } from 'kysely';

/** How long the tokens that existed before expiry did keep working after the upgrade. */
const LEGACY_TOKEN_TTL_MS = 90 * 24 * 3600 * 1000;

/**
 * Bearer tokens apart from principals, each with an expiry, a revocation and its last use; and the
 * owner of each outbox event and approval (the principal whose call it is about), so an agent's
 * reads and event stream can be narrowed to its own without reading the records.
 *
 * Each principal's one token (its hash was a column of `principals`) becomes a token that expires
 * 90 days after the upgrade: tokens made before expiries existed do not live forever.
 */
export function accessTokens(): Migration {
  return {
    async up(db: Kysely<unknown>) {
      await db.schema
        .createTable('tokens')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('tenant', 'text', (c) => c.notNull())
        .addColumn('principal', 'text', (c) => c.notNull())
        .addColumn('label', 'text')
        .addColumn('hash', 'text', (c) => c.notNull().unique())
        .addColumn('created_at', 'text', (c) => c.notNull())
        .addColumn('created_by', 'text', (c) => c.notNull())
        .addColumn('expires_at', 'text', (c) => c.notNull())
        .addColumn('revoked_at', 'text')
        .addColumn('revoked_by', 'text')
        .addColumn('revoke_reason', 'text')
        .addColumn('replaced_by', 'text')
        .addColumn('last_used_at', 'text')
        .execute();
      await db.schema
        .createIndex('tokens_principal')
        .on('tokens')
        .columns(['tenant', 'principal'])
        .execute();
      const legacy = await sql<{
        id: string;
        tenant: string;
        token_hash: string;
        created_at: string;
      }>`select id, tenant, token_hash, created_at from principals`.execute(db);
      const expires = new Date(Date.now() + LEGACY_TOKEN_TTL_MS).toISOString();
      for (const p of legacy.rows) {
        await sql`insert into tokens (id, tenant, principal, label, hash, created_at, created_by, expires_at)
          values (${randomUUID()}, ${p.tenant}, ${p.id}, ${null}, ${p.token_hash}, ${p.created_at}, ${'migration'}, ${expires})`.execute(
          db,
        );
      }
      // The principals table without its token column (no portable DROP of a UNIQUE column).
      await db.schema
        .createTable('principals_next')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('tenant', 'text', (c) => c.notNull())
        .addColumn('name', 'text', (c) => c.notNull())
        .addColumn('roles', 'text', (c) => c.notNull())
        .addColumn('project', 'text')
        .addColumn('agent_id', 'text')
        .addColumn('agent_version', 'text')
        .addColumn('created_at', 'text', (c) => c.notNull())
        .execute();
      await sql`insert into principals_next (id, tenant, name, roles, project, agent_id, agent_version, created_at)
        select id, tenant, name, roles, project, agent_id, agent_version, created_at from principals`.execute(
        db,
      );
      await db.schema.dropTable('principals').execute();
      await db.schema.alterTable('principals_next').renameTo('principals').execute();

      await db.schema.alterTable('outbox').addColumn('owner', 'text').execute();
      await sql`update outbox set owner = (select i.principal from invocations i where i.id = substr(outbox.subject, 12))
        where subject like 'invocation/%'`.execute(db);
      await db.schema.alterTable('approvals').addColumn('requested_by', 'text').execute();
      await sql`update approvals set requested_by = (select i.principal from invocations i where i.id = approvals.invocation_id)`.execute(
        db,
      );
      await sql`update outbox set owner = (select a.requested_by from approvals a where a.id = substr(outbox.subject, 10))
        where subject like 'approval/%'`.execute(db);
    },
  };
}
