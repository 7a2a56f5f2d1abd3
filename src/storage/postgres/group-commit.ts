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
   * of itself in `tx`: the writer may roll back to `savepoint`, set just before this call (the
   * batch sets it in a round trip it makes anyway when it can), or to savepoints of its own.
   * Throwing fails the batch.
   */
  run(tx: Transaction, items: readonly T[], savepoint: string): Promise<Settled<R>[]>;
}

/** The savepoint set before each {@link BulkWriter}, the first in the round trip of `begin`. */
const BULK_SAVEPOINT = 'bulk';

interface Queued {
  fn?: (tx: Transaction) => Promise<unknown>;
  bulk?: { writer: BulkWriter<unknown, unknown>; item: unknown };
  resolve: (v: unknown) => void;
  reject: (e: unknown) => void;
}

/**
 * Group commit on PostgreSQL: the writes a node queues while its previous batch commits share one
 * transaction (one commit, one WAL flush), as SQLite's writes of one event-loop turn do. A batch
 * begins its transaction and takes the write lock in one round trip, then takes what is queued
 * once it holds the lock. The next batch begins as soon as the previous one holds the lock, and
 * waits for the lock in the database, so it takes it the moment the previous one commits rather
 * than a few round trips later; two batches at most are in flight, one holding the lock. With more
 * than one write in a batch each closure runs under a savepoint, so a write that fails (a
 * constraint, a refused request) is rolled back alone and the others commit; the writes of a
 * {@link BulkWriter} run together, each still failing alone.
 */
export class GroupCommit {
  private queue: Queued[] = [];
  private scheduled = false;
  /** A batch has begun but not yet taken its writes (it waits for the lock). */
  private waiting = false;
  private readonly flushing = new Set<Promise<void>>();
  private readonly listeners = new Set<() => void>();

  /**
   * @param lock the statement, without parameters, that each batch's transaction runs first, in
   *   the round trip of its `begin` (PostgresDatabase takes its write lock there)
   * @param onFailure maps the error of a failed write to the one it rejects with
   */
  constructor(
    private readonly kysely: Kysely<Tables>,
    private readonly lock: string,
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
    while (this.flushing.size > 0 || this.queue.length > 0 || this.scheduled) {
      if (this.flushing.size > 0) await Promise.all(this.flushing);
      else await new Promise((r) => setImmediate(r));
    }
  }

  private schedule(): void {
    if (this.scheduled || this.waiting) return;
    this.scheduled = true;
    setImmediate(() => {
      this.scheduled = false;
      if (this.queue.length === 0 || this.waiting) return;
      this.waiting = true;
      const flushing = this.flush().finally(() => {
        this.flushing.delete(flushing);
        if (this.queue.length > 0) this.schedule();
      });
      this.flushing.add(flushing);
    });
  }

  private async flush(): Promise<void> {
    let batch: Queued[] = [];
    let taken = false;
    const take = () => {
      batch = this.queue;
      this.queue = [];
      taken = true;
      // The next batch may begin: it waits in the database for the lock this one holds.
      this.waiting = false;
      return batch;
    };
    const results: unknown[] = [];
    const failures = new Map<number, unknown>();
    try {
      await this.kysely.connection().execute(async (tx) => {
        try {
          // One round trip (the simple protocol runs all three); the lock is waited for in the
          // database.
          await sql.raw(`begin; ${this.lock}; savepoint ${BULK_SAVEPOINT}`).execute(tx);
          // The batch is what was queued by the time the write lock is held, not when the batch
          // began waiting for it: while another batch holds the lock, this node's writes gather
          // into one batch rather than a string of small ones that each wait their turn.
          take();
          await this.runBatch(tx, batch, results, failures);
          await sql`commit`.execute(tx);
        } catch (err) {
          // After a failed commit the transaction has ended already; this rollback only warns.
          await sql`rollback`.execute(tx).catch(() => undefined);
          throw err;
        }
      });
    } catch (err) {
      // Nothing of the batch is stored: each write rejects with its own error, else the batch's
      // (all that is queued when the transaction failed before taking its batch).
      if (!taken) take();
      const e = this.onFailure(err);
      batch.forEach((w, i) => w.reject(failures.has(i) ? this.onFailure(failures.get(i)) : e));
      return;
    }
    batch.forEach((w, i) => (failures.has(i) ? w.reject(failures.get(i)) : w.resolve(results[i])));
    for (const l of this.listeners) l();
  }

  /**
   * Runs the writes of `batch` in `tx`, each result or failure at its index: the bulks first (the
   * first one's savepoint was set with `begin`), then the others. The writes of one batch are
   * concurrent, so any order of them is one they could have had.
   */
  private async runBatch(
    tx: Transaction,
    batch: readonly Queued[],
    results: unknown[],
    failures: Map<number, unknown>,
  ): Promise<void> {
    const bulks = new Map<BulkWriter<unknown, unknown>, number[]>();
    for (const [i, w] of batch.entries()) {
      if (!w.bulk) continue;
      const at = bulks.get(w.bulk.writer) ?? [];
      at.push(i);
      bulks.set(w.bulk.writer, at);
    }
    let first = true;
    for (const [writer, at] of bulks) {
      if (!first) await sql.raw(`savepoint ${BULK_SAVEPOINT}`).execute(tx);
      first = false;
      const settled = await writer.run(
        tx,
        at.map((i) => batch[i]!.bulk!.item),
        BULK_SAVEPOINT,
      );
      settled.forEach((s, k) => {
        if (s.ok) results[at[k]!] = s.value;
        else failures.set(at[k]!, s.error);
      });
    }
    const single = batch.length === 1;
    for (const [i, w] of batch.entries()) {
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
  }
}
