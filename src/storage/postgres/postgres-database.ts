import pg from 'pg';
import type { MigrationProvider } from 'kysely';
import { Kysely, Migrator, sql } from 'kysely';
import { ResourceLifecycle, isGatehouseError } from '../../core/index.js';
import type { Tables } from '../schema/tables.js';
import { migrations } from '../schema/migrations.js';
import { storageUnavailable } from '../sql/storage-unavailable.js';
import { GroupCommit } from './group-commit.js';
import { MappingPostgresDialect } from './mapping-dialect.js';
import { OutboxListener } from './outbox-listener.js';
import { connectionFailureCode } from './postgres-failure.js';
import type { BulkWriter, Transaction } from './group-commit.js';

/** The session-level advisory lock the migrations run under (any fixed number; "gatehouse"). */
const MIGRATION_LOCK = '6761746568';
/**
 * The transaction-level advisory lock every write batch takes first. Writes of all nodes take
 * turns, as SQLite's one writer does, so what the stores read inside a write (the next policy or
 * secret version, an MCP server's identity) cannot change before they write, and outbox sequence
 * numbers are handed out in commit order: a reader that saw event n never later finds one below n.
 * Each node's group commit puts all its writes of the moment in one turn, its next batch
 * already waiting for the lock in the database (see {@link GroupCommit}).
 *
 * What relies on it, beyond the outbox order: the fence of a settling call (its status read, then
 * written), the next policy and secret versions, one live MCP server per identity, the first
 * signing key, an append's reading of its tree's frontier in the statement that advances the tree
 * head (that statement's snapshot predates any wait, so it must never wait for a head); and the
 * absence of deadlocks: a batch's writes take their tenants' tree heads in the
 * order the writes were queued, not in tenant order, which is safe only because no other batch
 * holds any meanwhile. Taking tree heads alone (without this lock) does not lift the turn-taking
 * for calls of one tenant: the head is held from the append to the commit.
 */
const WRITE_LOCK = '6761746569';
/** While the database is out of reach, how often to try whether it answers again. */
const PROBE_INTERVAL_MS = 500;
/** Connections per node unless configured. */
const DEFAULT_POOL_SIZE = 10;

/** Options of {@link PostgresDatabase.open}. */
export interface PostgresDatabaseOptions {
  /** A connection URL, `postgres://user@host:port/database`. */
  url: string;
  /** Most connections this node holds at once (default 10). */
  poolSize?: number;
}

/**
 * The session setting that compresses the large text values the pool writes (invocation records,
 * audit records, receipts) with lz4 rather than PostgreSQL's default pglz, when the server has it:
 * a batch's rows are compressed while it holds the write lock, and lz4 takes a fraction of the
 * time. Values stored either way read the same. A URL's own `options` parameter takes precedence.
 * @throws when the database cannot be reached.
 */
async function toastLz4(url: string): Promise<{ options?: string }> {
  const client = new pg.Client({ connectionString: url });
  client.on('error', () => undefined);
  await client.connect();
  try {
    const { rows } = await client.query<{ lz4: boolean }>(
      `select 'lz4' = any(enumvals) as lz4 from pg_settings where name = 'default_toast_compression'`,
    );
    return rows[0]?.lz4 === true ? { options: '-c default_toast_compression=lz4' } : {};
  } finally {
    await client.end().catch(() => undefined);
  }
}

/** The type id of int8 (`bigint`, `bigserial`, `count(*)`). */
const INT8 = 20;

/** int8 as a JS number (indices and sequences stay below 2^53); every other type as `pg` parses it. */
export const types = {
  getTypeParser: ((oid: number, format?: 'text' | 'binary') =>
    oid === INT8 && format !== 'binary'
      ? (v: string) => Number(v)
      : (pg.types.getTypeParser(
          oid,
          format ?? 'text',
        ) as unknown)) as typeof pg.types.getTypeParser,
};

/**
 * A PostgreSQL database shared by gateway nodes: a `pg` pool, Kysely with its PostgreSQL dialect,
 * the same migrations as SQLite run once under an advisory lock (nodes starting together wait for
 * the first), and group commit of this node's concurrent writes (see {@link GroupCommit}), the
 * batches of all nodes in turn (see {@link WRITE_LOCK}).
 */
export class PostgresDatabase {
  readonly kysely: Kysely<Tables>;
  private readonly commits: GroupCommit;
  private readonly state = new ResourceLifecycle('the database');
  /** Why the last write failed for want of the database, until a write or a probe succeeds. */
  private failing: string | null = null;
  private probeTimer: NodeJS.Timeout | undefined;
  private readonly errorListeners = new Set<(code: string) => void>();
  private readonly commitListeners = new Set<() => void>();
  private readonly listener: OutboxListener;

  private constructor(pool: pg.Pool, url: string) {
    this.listener = new OutboxListener(url, () => this.notify());
    this.kysely = new Kysely<Tables>({
      dialect: new MappingPostgresDialect({ pool }, (err) => this.classify(err)),
    });
    this.commits = new GroupCommit(
      this.kysely,
      `select pg_advisory_xact_lock(${WRITE_LOCK})`,
      (err) => this.classify(err),
    );
    this.commits.onCommit(() => {
      this.recovered();
      this.notify();
    });
  }

  /**
   * Connects and migrates.
   * @throws when the database cannot be reached or a migration fails (the pool is closed then).
   */
  static async open(options: PostgresDatabaseOptions): Promise<PostgresDatabase> {
    const max = options.poolSize ?? DEFAULT_POOL_SIZE;
    if (!Number.isInteger(max) || max < 1) {
      throw new RangeError(`pool size must be a positive integer, got ${max}`);
    }
    const pool = new pg.Pool({
      connectionString: options.url,
      max,
      types,
      ...(await toastLz4(options.url)),
    });
    // An idle client that loses its connection emits here; the pool drops it and connects anew.
    pool.on('error', () => undefined);
    // A client in use that loses its connection fails its query and also emits 'error', which
    // must not bring the node down: the query's error is the one that counts.
    pool.on('connect', (client) => client.on('error', () => undefined));
    const db = new PostgresDatabase(pool, options.url);
    try {
      await db.migrate(options.url);
      await db.listener.start();
    } catch (err) {
      await db.close();
      throw err;
    }
    return db;
  }

  /**
   * Runs the pending migrations while holding the migration lock on a connection of its own,
   * outside the pool (so a pool of one connection still has it for the migrations).
   */
  private async migrate(url: string): Promise<void> {
    const client = new pg.Client({ connectionString: url });
    client.on('error', () => undefined);
    await client.connect();
    try {
      await client.query('select pg_advisory_lock($1)', [MIGRATION_LOCK]);
      const all = migrations('postgres');
      const provider: MigrationProvider = { getMigrations: () => Promise.resolve(all) };
      const { error, results } = await new Migrator({
        db: this.kysely,
        provider,
      }).migrateToLatest();
      if (error) {
        const failed = results?.find((r) => r.status === 'Error');
        throw new Error(`database migration ${failed?.migrationName ?? '?'} failed`, {
          cause: error,
        });
      }
    } finally {
      // Ending the session releases its advisory lock.
      await client.end().catch(() => undefined);
    }
  }

  /**
   * Runs `fn` in a transaction shared with this node's other writes queued meanwhile, and resolves
   * once it is committed. A write that fails is rolled back alone (to its savepoint) and rejects
   * with its own error; if the commit fails every write of the batch rejects and none is stored.
   */
  write<T>(fn: (tx: Transaction) => Promise<T>): Promise<T> {
    if (!this.state.isOpen) return Promise.reject(new Error('database is closed'));
    return this.commits.write(fn);
  }

  /**
   * Runs `item` with the other items queued for `writer` meanwhile, in the batch's transaction
   * (see {@link BulkWriter}), and resolves once it is committed, as {@link write} does.
   */
  bulk<T, R>(writer: BulkWriter<T, R>, item: T): Promise<R> {
    if (!this.state.isOpen) return Promise.reject(new Error('database is closed'));
    return this.commits.bulk(writer, item);
  }

  /**
   * Null while the database takes writes; else why the last write failed (the database out of
   * reach), until a later write or a probe succeeds. Readiness reports it.
   */
  get storageProblem(): string | null {
    return this.failing;
  }

  /**
   * Calls `listener` with the code (`ECONNREFUSED`, `SQLSTATE 57P01`…) of each write that failed
   * because the database was out of reach; a write's own error is not reported. Returns the
   * unsubscribe.
   */
  onStorageError(listener: (code: string) => void): () => void {
    this.errorListeners.add(listener);
    return () => this.errorListeners.delete(listener);
  }

  /**
   * The error a failed write rejects with: for a lost database, UNAVAILABLE (nothing of the write
   * is stored: the call fails closed) and the node probes until the database answers again.
   */
  private classify(err: unknown): unknown {
    if (isGatehouseError(err)) return err;
    const code = connectionFailureCode(err);
    if (code === null) return err;
    for (const l of this.errorListeners) l(code);
    this.failing = `the database is out of reach (${code})`;
    if (!this.probeTimer && this.state.isOpen) {
      this.probeTimer = setInterval(() => void this.probe(), PROBE_INTERVAL_MS);
      this.probeTimer.unref();
    }
    return storageUnavailable(code, err);
  }

  private async probe(): Promise<void> {
    try {
      await sql`select 1`.execute(this.kysely);
      this.recovered();
    } catch {
      // Still out of reach: try again at the next interval.
    }
  }

  private recovered(): void {
    this.failing = null;
    if (this.probeTimer) clearInterval(this.probeTimer);
    this.probeTimer = undefined;
  }

  /**
   * Calls `listener` after each commit of this node and each notification that another node
   * committed outbox events (LISTEN/NOTIFY); returns the unsubscribe.
   */
  onCommit(listener: () => void): () => void {
    this.commitListeners.add(listener);
    return () => this.commitListeners.delete(listener);
  }

  private notify(): void {
    for (const l of this.commitListeners) l();
  }

  /** Waits for queued writes, then closes the pool. Safe to call twice. */
  close(): Promise<void> {
    return this.state.close(async () => {
      this.recovered();
      await this.listener.close();
      await this.commits.drain();
      await this.kysely.destroy().catch(() => undefined);
    });
  }
}
