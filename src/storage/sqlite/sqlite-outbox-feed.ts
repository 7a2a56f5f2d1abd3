import type { OutboxFeed, StoredEvent } from '../../core/index.js';
import { toStoredEvent } from '../sql/audit-rows.js';
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
    return Promise.resolve(rows.map(toStoredEvent));
  }

  // since and head run on every commit: fixed-shape queries on prepared statements.
  since(seq: number, limit: number): Promise<StoredEvent[]> {
    const rows = this.db.allPrepared(
      'outbox-since',
      (p) =>
        this.db.kysely
          .selectFrom('outbox')
          .selectAll()
          .where('seq', '>', p('seq'))
          .orderBy('seq')
          .limit(p('limit')),
      { seq, limit },
    );
    return Promise.resolve(rows.map(toStoredEvent));
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

  head(): Promise<number> {
    const r = this.db.firstPrepared(
      'outbox-head',
      () => this.db.kysely.selectFrom('outbox').select((eb) => eb.fn.max('seq').as('top')),
      {},
    );
    return Promise.resolve(r?.top === null || r?.top === undefined ? 0 : Number(r.top));
  }

  subscribe(listener: () => void): () => void {
    return this.db.onCommit(listener);
  }
}
