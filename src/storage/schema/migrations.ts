import { sql } from 'kysely';
import type { Kysely, Migration } from 'kysely';
import { backfillAuditNodes } from './backfill-audit-nodes.js';
import { accessTokens } from './migration-access-tokens.js';
import { auditHeads } from './migration-audit-heads.js';
import { invocationFilters } from './migration-invocation-filters.js';
import { nodes } from './migration-nodes.js';
import { nodeState } from './migration-node-state.js';
import { mcpStreamEvents } from './migration-mcp-stream-events.js';

/** SQL dialects the migrations are written for. */
export type SqlDialect = 'sqlite' | 'postgres';

/**
 * Versioned migrations, applied in name order at start. Written with Kysely's schema builder in the
 * subset both SQLite and PostgreSQL accept; the dialect-specific pieces are the outbox sequence and
 * the binary column (and row layout) of the audit log's subtree hashes, and PostgreSQL's tree heads.
 */
export function migrations(dialect: SqlDialect): Record<string, Migration> {
  return {
    '0001_spine': {
      async up(db: Kysely<unknown>) {
        await db.schema
          .createTable('tenants')
          .addColumn('id', 'text', (c) => c.primaryKey())
          .addColumn('name', 'text', (c) => c.notNull())
          .addColumn('created_at', 'text', (c) => c.notNull())
          .execute();
        await db.schema
          .createTable('projects')
          .addColumn('tenant', 'text', (c) => c.notNull())
          .addColumn('id', 'text', (c) => c.notNull())
          .addColumn('created_at', 'text', (c) => c.notNull())
          .addPrimaryKeyConstraint('projects_pk', ['tenant', 'id'])
          .execute();
        await db.schema
          .createTable('environments')
          .addColumn('tenant', 'text', (c) => c.notNull())
          .addColumn('project', 'text', (c) => c.notNull())
          .addColumn('name', 'text', (c) => c.notNull())
          .addColumn('class', 'text', (c) => c.notNull())
          .addColumn('frozen', 'integer', (c) => c.notNull())
          .addPrimaryKeyConstraint('environments_pk', ['tenant', 'project', 'name'])
          .execute();
        await db.schema
          .createTable('principals')
          .addColumn('id', 'text', (c) => c.primaryKey())
          .addColumn('tenant', 'text', (c) => c.notNull())
          .addColumn('name', 'text', (c) => c.notNull())
          .addColumn('roles', 'text', (c) => c.notNull())
          .addColumn('project', 'text')
          .addColumn('agent_id', 'text')
          .addColumn('agent_version', 'text')
          .addColumn('token_hash', 'text', (c) => c.notNull().unique())
          .addColumn('created_at', 'text', (c) => c.notNull())
          .execute();
        await db.schema
          .createTable('applied_events')
          .addColumn('tenant', 'text', (c) => c.notNull())
          .addColumn('event_id', 'text', (c) => c.notNull())
          .addColumn('type', 'text', (c) => c.notNull())
          .addColumn('asset', 'text', (c) => c.notNull())
          .addColumn('sequence', 'bigint')
          .addColumn('digest', 'text', (c) => c.notNull())
          .addColumn('applied_at', 'text', (c) => c.notNull())
          .addPrimaryKeyConstraint('applied_events_pk', ['tenant', 'event_id'])
          .execute();
        await db.schema
          .createTable('descriptors')
          .addColumn('tenant', 'text', (c) => c.notNull())
          .addColumn('tool_id', 'text', (c) => c.notNull())
          .addColumn('version', 'text', (c) => c.notNull())
          .addColumn('state', 'text', (c) => c.notNull())
          .addColumn('descriptor', 'text', (c) => c.notNull())
          .addColumn('digest', 'text', (c) => c.notNull())
          .addColumn('in_flight_policy', 'text', (c) => c.notNull())
          .addColumn('state_reason', 'text')
          .addColumn('published_at', 'text', (c) => c.notNull())
          .addColumn('updated_at', 'text', (c) => c.notNull())
          .addPrimaryKeyConstraint('descriptors_pk', ['tenant', 'tool_id', 'version'])
          .execute();
        await db.schema
          .createTable('agent_releases')
          .addColumn('tenant', 'text', (c) => c.notNull())
          .addColumn('agent_id', 'text', (c) => c.notNull())
          .addColumn('version', 'text', (c) => c.notNull())
          .addColumn('release', 'text', (c) => c.notNull())
          .addColumn('digest', 'text', (c) => c.notNull())
          .addColumn('published_at', 'text', (c) => c.notNull())
          .addPrimaryKeyConstraint('agent_releases_pk', ['tenant', 'agent_id', 'version'])
          .execute();
        await db.schema
          .createTable('policies')
          .addColumn('tenant', 'text', (c) => c.notNull())
          .addColumn('project', 'text', (c) => c.notNull())
          .addColumn('text', 'text', (c) => c.notNull())
          .addColumn('version', 'integer', (c) => c.notNull())
          .addColumn('updated_at', 'text', (c) => c.notNull())
          .addPrimaryKeyConstraint('policies_pk', ['tenant', 'project'])
          .execute();
        await db.schema
          .createTable('invocations')
          .addColumn('id', 'text', (c) => c.primaryKey())
          .addColumn('tenant', 'text', (c) => c.notNull())
          .addColumn('principal', 'text', (c) => c.notNull())
          .addColumn('idempotency_key', 'text', (c) => c.notNull())
          .addColumn('attempt', 'integer', (c) => c.notNull())
          .addColumn('request_hash', 'text', (c) => c.notNull())
          .addColumn('status', 'text', (c) => c.notNull())
          .addColumn('tool_id', 'text', (c) => c.notNull())
          .addColumn('record', 'text', (c) => c.notNull())
          .addColumn('created_at', 'text', (c) => c.notNull())
          .addColumn('updated_at', 'text', (c) => c.notNull())
          .addUniqueConstraint('invocations_idempotency', [
            'tenant',
            'principal',
            'idempotency_key',
            'attempt',
          ])
          .execute();
        await db.schema
          .createIndex('invocations_status')
          .on('invocations')
          .columns(['status', 'tenant'])
          .execute();
        await db.schema
          .createTable('approvals')
          .addColumn('id', 'text', (c) => c.primaryKey())
          .addColumn('tenant', 'text', (c) => c.notNull())
          .addColumn('invocation_id', 'text', (c) => c.notNull())
          .addColumn('tool_id', 'text', (c) => c.notNull())
          .addColumn('status', 'text', (c) => c.notNull())
          .addColumn('version', 'integer', (c) => c.notNull())
          .addColumn('record', 'text', (c) => c.notNull())
          .addColumn('expires_at', 'text', (c) => c.notNull())
          .addColumn('created_at', 'text', (c) => c.notNull())
          .addColumn('updated_at', 'text', (c) => c.notNull())
          .execute();
        await db.schema
          .createIndex('approvals_status')
          .on('approvals')
          .columns(['tenant', 'status'])
          .execute();
        await db.schema
          .createTable('receipts')
          .addColumn('invocation_id', 'text', (c) => c.primaryKey())
          .addColumn('tenant', 'text', (c) => c.notNull())
          .addColumn('envelope', 'text', (c) => c.notNull())
          .execute();
        await db.schema
          .createTable('audit_records')
          .addColumn('tenant', 'text', (c) => c.notNull())
          .addColumn('idx', 'bigint', (c) => c.notNull())
          .addColumn('record', 'text', (c) => c.notNull())
          .addColumn('leaf_hash', 'text', (c) => c.notNull())
          .addPrimaryKeyConstraint('audit_records_pk', ['tenant', 'idx'])
          .execute();
        await db.schema
          .createTable('checkpoints')
          .addColumn('tenant', 'text', (c) => c.notNull())
          .addColumn('tree_size', 'bigint', (c) => c.notNull())
          .addColumn('root_hash', 'text', (c) => c.notNull())
          .addColumn('timestamp', 'text', (c) => c.notNull())
          .addColumn('keyid', 'text', (c) => c.notNull())
          .addColumn('signature', 'text', (c) => c.notNull())
          .addPrimaryKeyConstraint('checkpoints_pk', ['tenant', 'tree_size'])
          .execute();
        await db.schema
          .createTable('outbox')
          .addColumn('seq', dialect === 'postgres' ? 'bigserial' : 'integer', (c) =>
            dialect === 'postgres' ? c.primaryKey() : c.primaryKey().autoIncrement(),
          )
          .addColumn('tenant', 'text', (c) => c.notNull())
          .addColumn('type', 'text', (c) => c.notNull())
          .addColumn('subject', 'text', (c) => c.notNull())
          .addColumn('at', 'text', (c) => c.notNull())
          .addColumn('data', 'text', (c) => c.notNull())
          .execute();
        await db.schema
          .createIndex('outbox_tenant')
          .on('outbox')
          .columns(['tenant', 'seq'])
          .execute();
      },
    },
    '0002_secrets_and_leases': {
      async up(db: Kysely<unknown>) {
        await db.schema
          .createTable('secrets')
          .addColumn('tenant', 'text', (c) => c.notNull())
          .addColumn('name', 'text', (c) => c.notNull())
          .addColumn('version', 'integer', (c) => c.notNull())
          .addColumn('scopes', 'text', (c) => c.notNull())
          .addColumn('ciphertext', 'text', (c) => c.notNull())
          .addColumn('iv', 'text', (c) => c.notNull())
          .addColumn('tag', 'text', (c) => c.notNull())
          .addColumn('key_id', 'text', (c) => c.notNull())
          .addColumn('created_at', 'text', (c) => c.notNull())
          .addColumn('deleted_at', 'text')
          .addPrimaryKeyConstraint('secrets_pk', ['tenant', 'name', 'version'])
          .execute();
        await db.schema
          .createTable('leases')
          .addColumn('id', 'text', (c) => c.primaryKey())
          .addColumn('tenant', 'text', (c) => c.notNull())
          .addColumn('pool', 'text', (c) => c.notNull())
          .addColumn('holder', 'text', (c) => c.notNull())
          .addColumn('status', 'text', (c) => c.notNull())
          .addColumn('record', 'text', (c) => c.notNull())
          .addColumn('expires_at', 'text', (c) => c.notNull())
          .addColumn('created_at', 'text', (c) => c.notNull())
          .addColumn('updated_at', 'text', (c) => c.notNull())
          .execute();
        await db.schema
          .createIndex('leases_status')
          .on('leases')
          .columns(['status', 'pool'])
          .execute();
        await db.schema
          .createIndex('leases_holder')
          .on('leases')
          .columns(['tenant', 'holder'])
          .execute();
      },
    },
    '0003_mcp': {
      async up(db: Kysely<unknown>) {
        await db.schema
          .createTable('mcp_servers')
          .addColumn('id', 'text', (c) => c.primaryKey())
          .addColumn('tenant', 'text', (c) => c.notNull())
          .addColumn('name', 'text', (c) => c.notNull())
          .addColumn('identity', 'text', (c) => c.notNull())
          .addColumn('state', 'text', (c) => c.notNull())
          .addColumn('version', 'integer', (c) => c.notNull())
          .addColumn('record', 'text', (c) => c.notNull())
          .addColumn('created_at', 'text', (c) => c.notNull())
          .addColumn('updated_at', 'text', (c) => c.notNull())
          .execute();
        await db.schema
          .createIndex('mcp_servers_identity')
          .on('mcp_servers')
          .columns(['tenant', 'identity'])
          .execute();
        await db.schema
          .createTable('mcp_discoveries')
          .addColumn('server_id', 'text', (c) => c.primaryKey())
          .addColumn('tenant', 'text', (c) => c.notNull())
          .addColumn('record', 'text', (c) => c.notNull())
          .addColumn('discovered_at', 'text', (c) => c.notNull())
          .execute();
        await db.schema
          .createTable('mcp_bindings')
          .addColumn('server_id', 'text', (c) => c.notNull())
          .addColumn('tool', 'text', (c) => c.notNull())
          .addColumn('tenant', 'text', (c) => c.notNull())
          .addColumn('state', 'text', (c) => c.notNull())
          .addColumn('record', 'text', (c) => c.notNull())
          .addColumn('updated_at', 'text', (c) => c.notNull())
          .addPrimaryKeyConstraint('mcp_bindings_pk', ['server_id', 'tool'])
          .execute();
      },
    },
    '0004_audit_nodes': {
      async up(db: Kysely<unknown>) {
        // Idempotent, so a backfill stopped half-way (SQLite runs migrations without a
        // transaction) resumes when the migration runs again.
        let table = db.schema
          .createTable('audit_nodes')
          .ifNotExists()
          .addColumn('tenant', 'text', (c) => c.notNull())
          .addColumn('level', 'integer', (c) => c.notNull())
          .addColumn('idx', 'bigint', (c) => c.notNull())
          .addColumn('hash', dialect === 'postgres' ? 'bytea' : 'blob', (c) => c.notNull())
          .addPrimaryKeyConstraint('audit_nodes_pk', ['tenant', 'level', 'idx']);
        // The key is the row: no rowid beside it (about half the bytes per node).
        if (dialect === 'sqlite') table = table.modifyEnd(sql`without rowid`);
        await table.execute();
        await backfillAuditNodes(db);
      },
    },
    '0005_access_tokens': accessTokens(),
    // PostgreSQL only: nodes append to a tenant's log under a row lock on its tree head. SQLite's
    // one writer needs none.
    ...(dialect === 'postgres' ? { '0006_audit_heads': auditHeads() } : {}),
    '0007_invocation_filters': invocationFilters(),
    '0008_nodes': nodes(),
    // PostgreSQL only: the nodes of one database share their signing keys and the agents' MCP
    // sessions. SQLite's one gateway keeps them in its data directory and its memory.
    ...(dialect === 'postgres' ? { '0009_node_state': nodeState() } : {}),
    // PostgreSQL only, as the sessions are: the events of their streams, so a client may resume a
    // dropped stream on any node. SQLite's one gateway keeps them in its memory with its sessions.
    ...(dialect === 'postgres' ? { '0010_mcp_stream_events': mcpStreamEvents() } : {}),
  };
}
