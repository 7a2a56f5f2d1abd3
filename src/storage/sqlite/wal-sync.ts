import { open } from 'node:fs/promises';

/** Forces what was written to the file at `path` onto the disk (fdatasync). */
export async function datasyncFile(path: string): Promise<void> {
  const file = await open(path, 'r');
  try {
    await file.datasync();
  } finally {
    await file.close();
  }
}

/** What waits for a sync: told null once its commit is on disk, else the sync's error. */
type Waiter = (err: Error | null) => void;

/**
 * Makes SQLite commits durable off the event loop. The database runs with `synchronous=NORMAL`, so
 * a commit writes its WAL frames without waiting for the disk; this then syncs the WAL file in
 * libuv's thread pool, one fdatasync for every commit made while the previous one ran. A commit's
 * waiters are told only once a sync that started after it has finished, so whoever is told that
 * something is recorded is told so exactly as late as `synchronous=FULL` would tell them, while the
 * event loop goes on parsing requests and building the next batch during the sync.
 */
export class WalSync {
  /** Waiters of commits made since the running sync started (the next sync covers them). */
  private next: Waiter[] = [];
  private running: Promise<void> | null = null;

  /** `sync` forces every commit made so far onto the disk (the WAL file's fdatasync). */
  constructor(private readonly sync: () => Promise<void>) {}

  /** Tells `waiter` once every commit made so far is on disk (or why that failed). */
  afterCommit(waiter: Waiter): void {
    this.next.push(waiter);
    if (!this.running) this.running = this.drain();
  }

  /** Resolves once every commit made so far is on disk (never rejects: a failed sync counts). */
  durable(): Promise<void> {
    if (!this.running && this.next.length === 0) return Promise.resolve();
    return new Promise((resolve) => this.afterCommit(() => resolve()));
  }

  private async drain(): Promise<void> {
    while (this.next.length > 0) {
      const covered = this.next;
      this.next = [];
      let failure: Error | null = null;
      try {
        await this.sync();
      } catch (err) {
        failure = err instanceof Error ? err : new Error(String(err));
      }
      for (const w of covered) w(failure);
    }
    this.running = null;
  }
}
