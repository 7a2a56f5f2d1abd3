import { sql } from 'kysely';
import type { Kysely } from 'kysely';
import type { Tables } from '../schema/tables.js';

/** The transaction a queued write runs in. */
export type Transaction = Kysely<Tables>;

interface Queued {
  fn: (tx: Transaction) => Promise<unknown>;
  resolve: (v: unknown) => void;
  reject: (e: unknown) => void;
}

/**
 * Group commit on PostgreSQL: the writes a node queues while its previous batch commits share one
 * transaction (one commit, one WAL flush), as SQLite's writes of one event-loop turn do. One batch
 * is in flight at a time. With more than one write in a batch each runs under a savepoint, so a
 * write that fails (a constraint, a refused request) is rolled back alone and the others commit.
 */
export class GroupCommit {
  private queue: Queued[] = [];
  private scheduled = false;
  private flushing: Promise<void> | null = null;
  private readonly listeners = new Set<() => void>();

  /**
   * @param begin runs first in each batch's transaction (PostgresDatabase takes its write lock
   *   there)
   * @param onFailure maps the error of a failed write to the one it rejects with
   */
  constructor(
    private readonly kysely: Kysely<Tables>,
    private readonly begin: (tx: Transaction) => Promise<void> = () => Promise.resolve(),
    /** Maps the error of a failed write to the one it rejects with (a lost connection's). */
    private readonly onFailure: (err: unknown) => unknown = (err) => err,
  ) {}

  /** Queues `fn`; resolves with its result once its batch committed. */
  write<T>(fn: (tx: Transaction) => Promise<T>): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.queue.push({ fn, resolve: resolve as (v: unknown) => void, reject });
      this.schedule();
    });
  }

  /** Calls `listener` after each commit; returns the unsubscribe. */
  onCommit(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Resolves once every queued write has settled. */
  async drain(): Promise<void> {
    while (this.flushing !== null || this.queue.length > 0 || this.scheduled) {
      if (this.flushing) await this.flushing;
      else await new Promise((r) => setImmediate(r));
    }
  }

  private schedule(): void {
    if (this.scheduled || this.flushing !== null) return;
    this.scheduled = true;
    setImmediate(() => {
      this.scheduled = false;
      this.flushing = this.flush().finally(() => {
        this.flushing = null;
        if (this.queue.length > 0) this.schedule();
      });
    });
  }

  private async flush(): Promise<void> {
    const batch = this.queue;
    this.queue = [];
    if (batch.length === 0) return;
    const results: unknown[] = [];
    const failures = new Map<number, unknown>();
    const single = batch.length === 1;
    try {
      await this.kysely.transaction().execute(async (tx) => {
        await this.begin(tx);
        for (const [i, w] of batch.entries()) {
          if (single) {
            results[i] = await w.fn(tx);
            continue;
          }
          await sql`savepoint write`.execute(tx);
          try {
            results[i] = await w.fn(tx);
            await sql`release savepoint write`.execute(tx);
          } catch (err) {
            failures.set(i, err);
            await sql`rollback to savepoint write`.execute(tx);
          }
        }
      });
    } catch (err) {
      // Nothing of the batch is stored: each write rejects with its own error, else the batch's.
      const e = this.onFailure(err);
      batch.forEach((w, i) => w.reject(failures.has(i) ? this.onFailure(failures.get(i)) : e));
      return;
    }
    batch.forEach((w, i) => (failures.has(i) ? w.reject(failures.get(i)) : w.resolve(results[i])));
    for (const l of this.listeners) l();
  }
}
