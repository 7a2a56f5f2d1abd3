import { closeSync, fsyncSync, openSync, rmSync, writeSync } from 'node:fs';
import { join } from 'node:path';

/** While storage refuses writes, how often to try whether it accepts them again. */
const PROBE_INTERVAL_MS = 500;
/** What a probe writes beside the database: a few pages, as a small commit needs. */
const PROBE_BYTES = 64 * 1024;

/**
 * Whether the storage under the SQLite file takes writes: failing from a write it refused (disk
 * full, an I/O error) until a later write succeeds or a probe beside the file does. Readiness
 * reports it; listeners hear each refusal.
 */
export class StorageHealth {
  private readonly listeners = new Set<(code: string) => void>();
  /** Why the last write failed for storage reasons, until a write or a probe succeeds again. */
  private failing: string | null = null;
  private probeTimer: NodeJS.Timeout | undefined;

  /** `dir`: the database file's directory, where probes write (null in memory: no probes). */
  constructor(private readonly dir: string | null) {}

  /** Null while storage accepts writes; else why the last write failed. */
  get problem(): string | null {
    return this.failing;
  }

  /** Calls `listener` with the code of each write storage refused; returns the unsubscribe. */
  onError(listener: (code: string) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** A write was refused with SQLite `code`: failing, probing until storage takes writes. */
  failed(code: string): void {
    for (const l of this.listeners) l(code);
    this.failing = `storage refuses writes (${code})`;
    if (this.probeTimer || this.dir === null) return;
    this.probeTimer = setInterval(() => this.probe(), PROBE_INTERVAL_MS);
    this.probeTimer.unref();
  }

  /** A write succeeded (or the database closes): not failing, no more probes. */
  recovered(): void {
    this.failing = null;
    if (this.probeTimer) clearInterval(this.probeTimer);
    this.probeTimer = undefined;
  }

  /** Writes and syncs a few pages beside the database: success means storage takes writes again. */
  private probe(): void {
    const file = join(this.dir!, '.storage-probe');
    try {
      const fd = openSync(file, 'w');
      try {
        writeSync(fd, Buffer.alloc(PROBE_BYTES));
        fsyncSync(fd);
      } finally {
        closeSync(fd);
      }
      this.recovered();
    } catch {
      // Still failing: try again at the next interval.
    } finally {
      rmSync(file, { force: true });
    }
  }
}
