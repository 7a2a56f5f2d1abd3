import type { GatewayNode, NodeStore } from '../../capacity/index.js';
import { nodeRow, parseNode } from '../sql/node-rows.js';
import type { PostgresDatabase } from './postgres-database.js';

/**
 * {@link NodeStore} on PostgreSQL. A claim is one conditional update, and writes of all nodes take
 * turns (the write lock), so of two nodes that claim at once only one finds the node still alive.
 */
export class PostgresNodeStore implements NodeStore {
  constructor(private readonly db: PostgresDatabase) {}

  register(node: GatewayNode): Promise<void> {
    const row = nodeRow(node);
    return this.db.write(async (tx) => {
      await tx
        .insertInto('nodes')
        .values(row)
        .onConflict((oc) => oc.column('id').doUpdateSet(row))
        .execute();
    });
  }

  heartbeat(id: string, at: string): Promise<boolean> {
    return this.db.write(async (tx) => {
      const r = await tx
        .updateTable('nodes')
        .set({ heartbeat_at: at })
        .where('id', '=', id)
        .where('status', '=', 'alive')
        .executeTakeFirst();
      return Number(r.numUpdatedRows) > 0;
    });
  }

  stop(id: string, at: string): Promise<void> {
    return this.db.write(async (tx) => {
      await tx
        .updateTable('nodes')
        .set({ status: 'stopped', ended_at: at })
        .where('id', '=', id)
        .where('status', '=', 'alive')
        .execute();
    });
  }

  claimStale(claimer: string, staleBefore: string, at: string): Promise<GatewayNode[]> {
    return this.db.write(async (tx) => {
      const rows = await tx
        .updateTable('nodes')
        .set({ status: 'claimed', ended_at: at, claimed_by: claimer })
        .where('status', '=', 'alive')
        .where('heartbeat_at', '<', staleBefore)
        .where('id', '<>', claimer)
        .returningAll()
        .execute();
      return rows.map(parseNode).sort((a, b) => a.id.localeCompare(b.id));
    });
  }

  async get(id: string): Promise<GatewayNode | undefined> {
    const row = await this.db.kysely
      .selectFrom('nodes')
      .selectAll()
      .where('id', '=', id)
      .executeTakeFirst();
    return row ? parseNode(row) : undefined;
  }

  async list(): Promise<GatewayNode[]> {
    const rows = await this.db.kysely.selectFrom('nodes').selectAll().orderBy('id').execute();
    return rows.map(parseNode);
  }
}
