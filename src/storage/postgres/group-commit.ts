import { sql } from 'kysely';
import type { Kysely } from 'kysely';
import type { Tables } from '../schema/tables.js';

/** The transaction a queued write runs in. */
export type Transaction = Kysely<Tables>;

/** How one write of a bulk ended: its result, or the error it alone fails with. */
export type Settled<R> = { ok: true; value: R } | { ok: false; error: unknown };

/**
 * Writes of one kind that a batch runs together, in a few multi-row statements for all of them
 * rather than a few each: each statement is a round trip, and a batch's round trips follow one
 * another while it holds the write lock.
 */
export interface BulkWriter<T, R> {
  /**
   * Runs `items` in `tx` and settles each, in their order. A write that fails must leave nothing
   * of itself in `tx` (the writer rolls back to a savepoint of its own); throwing fails the batch.
   */
  run(tx: Transaction, items: readonly T[]): Promise<Settled<R>[]>;
}

interface Queued {
  fn?: (tx: Transaction) => Promise<unknown>;
  bulk?: { writer: BulkWriter<unknown, unknown>; item: unknown };
  resolve: (v: unknown) => void;
  reject: (e: unknown) => void;
}

/**
 * Group commit on PostgreSQL: the writes a node queues while its previous batch commits share one
 * transaction (one commit, one WAL flush), as SQLite's writes of one event-loop turn do. One batch
 * is in flight at a time; it takes what is queued once its transaction holds the write lock. With
 * more than one write in a batch each closure runs under a savepoint, so a write that fails (a
 * constraint, a refused request) is rolled back alone and the others commit; the writes of a
 * {@link BulkWriter} run together, each still failing alone.
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

  /** Queues `item` for `writer`, which runs it with the other items queued for it in its batch. */
  bulk<T, R>(writer: BulkWriter<T, R>, item: T): Promise<R> {
    return new Promise<R>((resolve, reject) => {
      this.queue.push({
        bulk: { writer: writer, item },
        resolve: resolve as (v: unknown) => void,
        reject,
      });
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
    if (this.queue.length === 0) return;
    let batch: Queued[] = [];
    const take = () => {
      batch = this.queue;
      this.queue = [];
      return batch;
    };
    const results: unknown[] = [];
    const failures = new Map<number, unknown>();
    try {
      await this.kysely.transaction().execute(async (tx) => {
        await this.begin(tx);
        // The batch is what was queued by the time the write lock is held, not when the batch
        // began waiting for it: while another node's batch holds the lock, this node's writes
        // gather into one batch rather than a string of small ones that each wait their turn.
        take();
        const single = batch.length === 1;
        const bulks = new Map<BulkWriter<unknown, unknown>, number[]>();
        for (const [i, w] of batch.entries()) {
          if (w.bulk) {
            const at = bulks.get(w.bulk.writer) ?? [];
            at.push(i);
            bulks.set(w.bulk.writer, at);
            continue;
          }
          if (!w.fn) continue;
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
        for (const [writer, at] of bulks) {
          const settled = await writer.run(
            tx,
            at.map((i) => batch[i]!.bulk!.item),
          );
          settled.forEach((s, k) => {
            if (s.ok) results[at[k]!] = s.value;
            else failures.set(at[k]!, s.error);
          });
        }
      });
    } catch (err) {
      // Nothing of the batch is stored: each write rejects with its own error, else the batch's
      // (all that is queued when the transaction failed before taking its batch).
      if (batch.length === 0) take();
      const e = this.onFailure(err);
      batch.forEach((w, i) => w.reject(failures.has(i) ? this.onFailure(failures.get(i)) : e));
      return;
    }
    batch.forEach((w, i) => (failures.has(i) ? w.reject(failures.get(i)) : w.resolve(results[i])));
    for (const l of this.listeners) l();
  }
}
