import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';
import type Database from 'better-sqlite3';
import { storageFailureCode } from './storage-failure.js';

/** At most one checkpoint this often, and only after commits. */
const CHECKPOINT_INTERVAL_MS = 200;
/** A checkpoint that has not answered in this long is taken for stuck: the worker is replaced. */
const CHECKPOINT_TIMEOUT_MS = 30_000;
/** After this many workers lost, checkpoints go back to SQLite's own, on the writing thread. */
const MAX_WORKERS_LOST = 3;

/**
 * The worker's script: its own connection to the database, a passive checkpoint per request. A
 * passive checkpoint never waits for the writer: it copies what the WAL holds into the database
 * file (fsyncing both) up to the last frame no reader still needs.
 */
const WORKER_SCRIPT = `
const { parentPort, workerData } = require('node:worker_threads');
const Database = require(workerData.driver);
const db = new Database(workerData.file);
parentPort.on('message', () => {
  try {
    const [r] = db.pragma('wal_checkpoint(PASSIVE)');
    parentPort.postMessage({ frames: r.log, copied: r.checkpointed });
  } catch (err) {
    parentPort.postMessage({ error: String(err && err.message || err), code: err && err.code });
  }
});
`;

/** What the checkpointer reports of itself (tests and metrics). */
export interface CheckpointerState {
  /** Checkpoints the worker finished. */
  done: number;
  /** Workers that died, failed or got stuck. */
  lost: number;
  /** Checkpoints the disk refused (full, failing), to be tried again. */
  refused: number;
  /** True once checkpoints went back to the writing thread (too many workers lost). */
  degraded: boolean;
}

/**
 * Keeps the WAL short without stalling the event loop: SQLite's automatic checkpoint (which runs
 * inside a commit, on the thread that commits, and fsyncs twice) is off, and a worker thread with
 * its own connection checkpoints instead, at most every {@link CHECKPOINT_INTERVAL_MS} after
 * commits. A worker that dies or stops answering is replaced; after {@link MAX_WORKERS_LOST}, SQLite's
 * own automatic checkpoint is switched back on, so the WAL stays bounded whatever happens.
 */
export class Checkpointer {
  private worker: Worker | null = null;
  private busySince: number | null = null;
  private pending = false;
  private timer: NodeJS.Timeout | null = null;
  private closed = false;
  readonly state: CheckpointerState = { done: 0, lost: 0, refused: 0, degraded: false };

  constructor(
    private readonly file: string,
    private readonly raw: Database.Database,
    /** Replaces the worker's script (tests of its failures). */
    private readonly script: string = WORKER_SCRIPT,
    /** How long a checkpoint may take before its worker is taken for stuck. */
    private readonly timeoutMs: number = CHECKPOINT_TIMEOUT_MS,
  ) {
    raw.pragma('wal_autocheckpoint = 0');
    // Once checkpointed, the WAL's space goes back to the disk when it starts over: a burst does
    // not keep its size for good, and a full disk shows at the next commit, not many later.
    raw.pragma('journal_size_limit = 0');
  }

  /** Called after each commit: a checkpoint follows within the interval. */
  committed(): void {
    if (this.closed || this.state.degraded) return;
    this.pending = true;
    if (this.timer) return;
    this.timer = setTimeout(() => this.tick(), CHECKPOINT_INTERVAL_MS);
    this.timer.unref();
  }

  private tick(): void {
    this.timer = null;
    if (this.closed || this.state.degraded) return;
    if (this.busySince !== null) {
      if (Date.now() - this.busySince > this.timeoutMs) this.lose();
      else this.again();
      return;
    }
    if (!this.pending) return;
    this.pending = false;
    const worker = this.worker ?? this.start();
    this.busySince = Date.now();
    worker.postMessage('checkpoint');
    // Look again while it runs: a checkpoint that never answers must be noticed without commits.
    this.again();
  }

  private again(): void {
    this.timer ??= setTimeout(() => this.tick(), CHECKPOINT_INTERVAL_MS);
    this.timer.unref();
  }

  private start(): Worker {
    const driver = createRequire(import.meta.url).resolve('better-sqlite3');
    const worker = new Worker(this.script, { eval: true, workerData: { driver, file: this.file } });
    worker.unref();
    worker.on('message', (m: { error?: string; code?: string }) => {
      if (worker !== this.worker) return;
      this.busySince = null;
      if (m.error === undefined) this.state.done++;
      else if (storageFailureCode({ code: m.code }) !== null) {
        // The disk refuses (full, failing): not the worker's fault. Try again later; meanwhile
        // the WAL grows until the commits themselves are refused, and storage reports that.
        this.state.refused++;
        this.pending = true;
      } else this.lose();
      if (this.pending) this.again();
    });
    const gone = () => {
      if (worker === this.worker) this.lose();
    };
    worker.on('error', gone);
    worker.on('exit', gone);
    this.worker = worker;
    return worker;
  }

  /** The worker failed, died or is stuck: replace it, or checkpoint on this thread from now on. */
  private lose(): void {
    const worker = this.worker;
    this.worker = null;
    this.busySince = null;
    if (worker) void worker.terminate().catch(() => undefined);
    if (this.closed) return;
    this.state.lost++;
    if (this.state.lost >= MAX_WORKERS_LOST) {
      this.state.degraded = true;
      this.raw.pragma('wal_autocheckpoint = 1000');
      try {
        this.raw.pragma('wal_checkpoint(PASSIVE)');
      } catch {
        // The next commit's automatic checkpoint tries again.
      }
      return;
    }
    this.pending = true;
    this.again();
  }

  /** Stops the worker (the last connection's close checkpoints what is left). */
  async close(): Promise<void> {
    this.closed = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    const worker = this.worker;
    this.worker = null;
    if (worker) await worker.terminate().catch(() => undefined);
  }
}
