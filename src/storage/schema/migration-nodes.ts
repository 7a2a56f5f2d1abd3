import type { Kysely, Migration } from 'kysely';

/**
 * The gateway nodes that share the database, each with its last heartbeat, and the node each
 * invocation and lease belongs to (null for those stored before nodes were recorded), so a node
 * that stops heartbeating can be found and its calls and leases taken over.
 */
export function nodes(): Migration {
  return {
    async up(db: Kysely<unknown>) {
      await db.schema
        .createTable('nodes')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('host', 'text', (c) => c.notNull())
        .addColumn('pid', 'integer', (c) => c.notNull())
        .addColumn('status', 'text', (c) => c.notNull())
        .addColumn('started_at', 'text', (c) => c.notNull())
        .addColumn('heartbeat_at', 'text', (c) => c.notNull())
        .addColumn('ended_at', 'text')
        .addColumn('claimed_by', 'text')
        .execute();
      await db.schema.alterTable('invocations').addColumn('node', 'text').execute();
      await db.schema.alterTable('leases').addColumn('node', 'text').execute();
      await db.schema
        .createIndex('invocations_node')
        .on('invocations')
        .columns(['node', 'status'])
        .execute();
      await db.schema.createIndex('leases_node').on('leases').columns(['node', 'status']).execute();
    },
  };
}
