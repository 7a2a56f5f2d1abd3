import type { GatewayNode, NodeStore } from '../../capacity/index.js';
import type { Tables } from '../schema/tables.js';
import { nodeRow, parseNode } from '../sql/node-rows.js';
import type { SqliteDatabase } from './sqlite-database.js';

/**
 * {@link NodeStore} on SQLite. One gateway holds a SQLite file at a time, so the registry has one
 * live node; it still records it, and a node left by a crash under another id is claimed.
 */
export class SqliteNodeStore implements NodeStore {
  constructor(private readonly db: SqliteDatabase) {}

  register(node: GatewayNode): Promise<void> {
    const row = nodeRow(node);
    return this.db.write(() => {
      this.db.run(
        this.db.kysely
          .insertInto('nodes')
          .values(row)
          .onConflict((oc) => oc.column('id').doUpdateSet(row)),
      );
    });
  }

  heartbeat(id: string, at: string): Promise<boolean> {
    return this.db.write(
      () =>
        this.db.run(
          this.db.kysely
            .updateTable('nodes')
            .set({ heartbeat_at: at })
            .where('id', '=', id)
            .where('status', '=', 'alive'),
        ).changes > 0,
    );
  }

  stop(id: string, at: string): Promise<void> {
    return this.db.write(() => {
      this.db.run(
        this.db.kysely
          .updateTable('nodes')
          .set({ status: 'stopped', ended_at: at })
          .where('id', '=', id)
          .where('status', '=', 'alive'),
      );
    });
  }

  claimStale(claimer: string, staleBefore: string, at: string): Promise<GatewayNode[]> {
    return this.db.write(() =>
      this.db
        .all<Tables['nodes']>(
          this.db.kysely
            .updateTable('nodes')
            .set({ status: 'claimed', ended_at: at, claimed_by: claimer })
            .where('status', '=', 'alive')
            .where('heartbeat_at', '<', staleBefore)
            .where('id', '<>', claimer)
            .returningAll(),
        )
        .map(parseNode)
        .sort((a, b) => a.id.localeCompare(b.id)),
    );
  }

  get(id: string): Promise<GatewayNode | undefined> {
    const row = this.db.first(this.db.kysely.selectFrom('nodes').selectAll().where('id', '=', id));
    return Promise.resolve(row ? parseNode(row) : undefined);
  }

  list(): Promise<GatewayNode[]> {
    const rows = this.db.all(this.db.kysely.selectFrom('nodes').selectAll().orderBy('id'));
    return Promise.resolve(rows.map(parseNode));
  }
}
