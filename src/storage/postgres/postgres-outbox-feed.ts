import type { OutboxFeed, StoredEvent } from '../../core/index.js';
import { toStoredEvent } from '../sql/audit-rows.js';
import type { PostgresDatabase } from './postgres-database.js';

/**
 * {@link OutboxFeed} on PostgreSQL: the outbox table is the truth; a subscriber is woken by this
 * node's commits and by the other nodes' (LISTEN/NOTIFY, see {@link PostgresDatabase.onCommit}).
 */
export class PostgresOutboxFeed implements OutboxFeed {
  constructor(private readonly db: PostgresDatabase) {}

  async after(tenant: string, seq: number, limit: number): Promise<StoredEvent[]> {
    const rows = await this.db.kysely
      .selectFrom('outbox')
      .selectAll()
      .where('tenant', '=', tenant)
      .where('seq', '>', seq)
      .orderBy('seq')
      .limit(limit)
      .execute();
    return rows.map(toStoredEvent);
  }

  async since(seq: number, limit: number): Promise<StoredEvent[]> {
    const rows = await this.db.kysely
      .selectFrom('outbox')
      .selectAll()
      .where('seq', '>', seq)
      .orderBy('seq')
      .limit(limit)
      .execute();
    return rows.map(toStoredEvent);
  }

  async latest(tenant: string): Promise<number> {
    const r = await this.db.kysely
      .selectFrom('outbox')
      .select((eb) => eb.fn.max('seq').as('top'))
      .where('tenant', '=', tenant)
      .executeTakeFirst();
    return r?.top === null || r?.top === undefined ? 0 : Number(r.top);
  }

  async head(): Promise<number> {
    const r = await this.db.kysely
      .selectFrom('outbox')
      .select((eb) => eb.fn.max('seq').as('top'))
      .executeTakeFirst();
    return r?.top === null || r?.top === undefined ? 0 : Number(r.top);
  }

  subscribe(listener: () => void): () => void {
    return this.db.onCommit(listener);
  }
}
