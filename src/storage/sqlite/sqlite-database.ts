import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import Database from 'better-sqlite3';
import type { Compilable, MigrationProvider } from 'kysely';
import { Kysely, Migrator, SqliteDialect } from 'kysely';
import { ResourceLifecycle } from '../../core/index.js';
import type { Tables } from '../schema/tables.js';
import { migrations } from '../schema/migrations.js';
import { storageUnavailable } from '../sql/storage-unavailable.js';
import { storageFailureCode } from './storage-failure.js';
import { StorageHealth } from './storage-health.js';

/** Options of {@link SqliteDatabase.open}. */
export interface SqliteDatabaseOptions {
  /** A file path, or `:memory:`. */
  file: string;
  /**
   * `full` (default) fsyncs every commit; `normal` survives a process crash but not a power cut.
   * Commits are grouped, so `full` costs one fsync per batch, not per write.
   */
  synchronous?: 'full' | 'normal';
}

type Statement = Database.Statement<unknown[], unknown>;

/** Makes a named stand-in for a value of a prepared query (typed to fit any column). */
type Placeholders = (name: string) => never;

/**
 * The embedded SQLite database: better-sqlite3 in WAL mode, Kysely as the query builder (its
 * queries are compiled once per shape and run on cached prepared statements), migrations at open,
 * and group commit: writes queued in the same turn of the event loop share one transaction and
 * one fsync.
 */
export class SqliteDatabase {
  readonly kysely: Kysely<Tables>;
  private readonly statements = new Map<string, Statement>();
  /** Prepared queries by key: their SQL, and for each parameter its placeholder name or value. */
  private readonly prepared = new Map<
    string,
    { sql: string; names: (string | { value: unknown })[] }
  >();
  /**
   * Values remembered for the running transaction only (the next audit index of a tenant, once
   * read), emptied as each transaction starts.
   */
  readonly transactionCache = new Map<string, unknown>();
  private queue: {
    fn: () => unknown;
    resolve: (v: unknown) => void;
    reject: (e: unknown) => void;
  }[] = [];
  private scheduled = false;
  private readonly commitListeners = new Set<() => void>();
  private readonly state = new ResourceLifecycle('the database');
  private readonly health: StorageHealth;

  private constructor(
    readonly raw: Database.Database,
    /** The directory of the database file (null in memory), where probes write. */
    dir: string | null,
  ) {
    this.kysely = new Kysely<Tables>({ dialect: new SqliteDialect({ database: raw }) });
    this.health = new StorageHealth(dir);
  }

  /** Opens (creating when absent) and migrates the database. */
  static async open(options: SqliteDatabaseOptions): Promise<SqliteDatabase> {
    if (options.file !== ':memory:') mkdirSync(dirname(options.file), { recursive: true });
    const raw = new Database(options.file);
    raw.pragma('journal_mode = WAL');
    raw.pragma(`synchronous = ${options.synchronous ?? 'full'}`);
    raw.pragma('foreign_keys = ON');
    raw.pragma('busy_timeout = 5000');
    const db = new SqliteDatabase(raw, options.file === ':memory:' ? null : dirname(options.file));
    await db.migrate();
    return db;
  }

  private async migrate(): Promise<void> {
    const all = migrations('sqlite');
    const provider: MigrationProvider = {
      getMigrations: () => Promise.resolve(all),
    };
    const { error, results } = await new Migrator({ db: this.kysely, provider }).migrateToLatest();
    if (error) {
      const failed = results?.find((r) => r.status === 'Error');
      throw new Error(`database migration ${failed?.migrationName ?? '?'} failed`, {
        cause: error,
      });
    }
  }

  private statement(sqlText: string): Statement {
    let s = this.statements.get(sqlText);
    if (!s) {
      s = this.raw.prepare(sqlText);
      this.statements.set(sqlText, s);
    }
    return s;
  }

  /**
   * The query prepared under `key`: built with Kysely and compiled the first time only, then run
   * on its prepared statement with new values (`build` receives named placeholders instead of
   * values). For the hot path, where building and compiling each query again costs more than
   * running it.
   */
  private prepare(
    key: string,
    build: (p: Placeholders) => Compilable,
  ): { statement: Statement; names: (string | { value: unknown })[] } {
    let shape = this.prepared.get(key);
    if (!shape) {
      const p = ((name: string) => `\u0000${name}`) as unknown as Placeholders;
      const c = build(p).compile();
      const names = c.parameters.map((v) =>
        typeof v === 'string' && v.startsWith('\u0000') ? v.slice(1) : { value: v },
      );
      shape = { sql: c.sql, names };
      this.prepared.set(key, shape);
    }
    return { statement: this.statement(shape.sql), names: shape.names };
  }

  private values(
    names: (string | { value: unknown })[],
    values: Record<string, unknown>,
  ): unknown[] {
    return names.map((n) => (typeof n === 'string' ? values[n] : n.value));
  }

  /** Runs the write prepared under `key` (see {@link prepare}) with `values` for its placeholders. */
  runPrepared(
    key: string,
    build: (p: Placeholders) => Compilable,
    values: Record<string, unknown>,
  ): Database.RunResult {
    const { statement, names } = this.prepare(key, build);
    return statement.run(...this.values(names, values));
  }

  /** The first row of the query prepared under `key` (see {@link prepare}). */
  firstPrepared<T>(
    key: string,
    build: (p: Placeholders) => Compilable<T>,
    values: Record<string, unknown>,
  ): T | undefined {
    const { statement, names } = this.prepare(key, build);
    return statement.get(...this.values(names, values)) as T | undefined;
  }

  /** Every row of the query prepared under `key` (see {@link prepare}). */
  allPrepared<T>(
    key: string,
    build: (p: Placeholders) => Compilable<T>,
    values: Record<string, unknown>,
  ): T[] {
    const { statement, names } = this.prepare(key, build);
    return statement.all(...this.values(names, values)) as T[];
  }

  /** Runs a write query synchronously; call inside {@link write} for durability and atomicity. */
  run(query: Compilable): Database.RunResult {
    const c = query.compile();
    return this.statement(c.sql).run(...(c.parameters as unknown[]));
  }

  /** Every row a query returns. */
  all<T>(query: Compilable<T>): T[] {
    const c = query.compile();
    return this.statement(c.sql).all(...(c.parameters as unknown[])) as T[];
  }

  /** The first row a query returns, or undefined. */
  first<T>(query: Compilable<T>): T | undefined {
    const c = query.compile();
    return this.statement(c.sql).get(...(c.parameters as unknown[])) as T | undefined;
  }

  /**
   * Runs `fn` inside a transaction shared with the other writes queued in this turn, and resolves
   * once that transaction is durably committed. If the shared transaction fails, each queued write
   * is retried in a transaction of its own so one bad write cannot sink the others; a write that
   * fails alone rejects with its own error and leaves nothing behind.
   */
  write<T>(fn: () => T): Promise<T> {
    if (!this.state.isOpen) return Promise.reject(new Error('database is closed'));
    return new Promise<T>((resolve, reject) => {
      this.queue.push({ fn, resolve: resolve as (v: unknown) => void, reject });
      if (!this.scheduled) {
        this.scheduled = true;
        setImmediate(() => this.flush());
      }
    });
  }

  private flush(): void {
    this.scheduled = false;
    const batch = this.queue;
    this.queue = [];
    if (batch.length === 0) return;
    const results: unknown[] = [];
    try {
      this.transactionCache.clear();
      this.raw.transaction(() => {
        for (const w of batch) results.push(w.fn());
      })();
      batch.forEach((w, i) => w.resolve(results[i]));
      this.health.recovered();
      this.committed();
      return;
    } catch {
      // Fall through: isolate the failing write.
    }
    for (const w of batch) {
      try {
        this.transactionCache.clear();
        w.resolve(this.raw.transaction(w.fn)());
        this.health.recovered();
      } catch (err) {
        const code = storageFailureCode(err);
        if (code === null) w.reject(err);
        else {
          this.health.failed(code);
          w.reject(storageUnavailable(code, err));
        }
      }
    }
    this.committed();
  }

  /**
   * Null while storage accepts writes; else why the last write failed (`SQLITE_FULL`…), until a
   * later write or a probe succeeds. Readiness reports it.
   */
  get storageProblem(): string | null {
    return this.health.problem;
  }

  /**
   * Calls `listener` with the SQLite error code (`SQLITE_FULL`, `SQLITE_IOERR`…) of each write
   * storage refused; a write's own error (a refused request, a constraint) is not reported.
   * Returns the unsubscribe.
   */
  onStorageError(listener: (code: string) => void): () => void {
    return this.health.onError(listener);
  }

  /** Calls `listener` after each group commit; returns the unsubscribe. */
  onCommit(listener: () => void): () => void {
    this.commitListeners.add(listener);
    return () => this.commitListeners.delete(listener);
  }

  private committed(): void {
    for (const l of this.commitListeners) l();
  }

  /** Flushes queued writes and closes the file. Safe to call twice. */
  close(): Promise<void> {
    return this.state.close(async () => {
      this.health.recovered();
      if (this.queue.length > 0) this.flush();
      await this.kysely.destroy().catch(() => undefined);
      if (this.raw.open) this.raw.close();
    });
  }
}
