import type { EventType, OutboxFeed, StoredEvent } from '../../core/index.js';
import type { SqliteDatabase } from './sqlite-database.js';

/** {@link OutboxFeed} on SQLite: the outbox table, and the database's commit notifications. */
export class SqliteOutboxFeed implements OutboxFeed {
  constructor(private readonly db: SqliteDatabase) {}

  after(tenant: string, seq: number, limit: number): Promise<StoredEvent[]> {
    const rows = this.db.all(
      this.db.kysely
        .selectFrom('outbox')
        .selectAll()
        .where('tenant', '=', tenant)
        .where('seq', '>', seq)
        .orderBy('seq')
        .limit(limit),
    );
    return Promise.resolve(
      rows.map((r) => ({
        seq: Number(r.seq),
        type: r.type as EventType,
        tenant: r.tenant,
        subject: r.subject,
        at: r.at,
        data: JSON.parse(r.data) as Record<string, unknown>,
      })),
    );
  }

  latest(tenant: string): Promise<number> {
    const r = this.db.first(
      this.db.kysely
        .selectFrom('outbox')
        .select((eb) => eb.fn.max('seq').as('top'))
        .where('tenant', '=', tenant),
    );
    return Promise.resolve(r?.top === null || r?.top === undefined ? 0 : Number(r.top));
  }

  subscribe(listener: () => void): () => void {
    return this.db.onCommit(listener);
  }
}
