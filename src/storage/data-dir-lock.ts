import { mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { ErrorCode, GatehouseError, isoTime } from '../core/index.js';

/** Who holds a data directory: written beside the lock by the process that holds it. */
export interface LockHolder {
  pid: number;
  host: string;
  /** When the holding process started (ISO 8601). */
  startedAt: string;
}

/** The lock file (a kernel lock is held on it) and the file naming its holder. */
const LOCK_FILE = 'gatehouse.lock';
const HOLDER_FILE = 'gatehouse.lock.holder.json';

/**
 * One data directory, one gateway (issue 10, item 12). The lock is a kernel lock (SQLite's POSIX
 * lock on `gatehouse.lock`, held by an open exclusive transaction), so it ends with its process
 * however that ends: a lock left by a dead gateway is no lock at all, and the next one takes it
 * over without a race. The holder's pid, host and start time are written beside it, for the
 * error a second gateway gets. Offline readers of the database (`audit verify`) are not blocked.
 */
export class DataDirLock {
  private constructor(
    private readonly db: Database.Database,
    private readonly dir: string,
    /** The holder this lock took over from, when the last one ended without releasing it. */
    readonly previous: LockHolder | null,
  ) {}

  /**
   * Takes the lock of `dataDir` (creating the directory).
   * @throws GatehouseError CONFLICT naming the holder when another live process holds it.
   */
  static acquire(dataDir: string): DataDirLock {
    mkdirSync(dataDir, { recursive: true });
    const db = new Database(join(dataDir, LOCK_FILE), { timeout: 0 });
    try {
      db.pragma('locking_mode = EXCLUSIVE');
      db.exec('BEGIN EXCLUSIVE');
    } catch (err) {
      db.close();
      if ((err as { code?: string }).code !== 'SQLITE_BUSY') throw err;
      throw new GatehouseError(
        ErrorCode.CONFLICT,
        `The data directory ${dataDir} is in use by another Gatehouse (${describe(readHolder(dataDir))}). Stop that gateway first, or start this one with another --data directory.`,
        { details: { dataDir, holder: readHolder(dataDir) } },
      );
    }
    const previous = readHolder(dataDir);
    const self: LockHolder = {
      pid: process.pid,
      host: hostname(),
      startedAt: isoTime(Date.now() - process.uptime() * 1000),
    };
    const tmp = join(dataDir, `${HOLDER_FILE}.${process.pid}`);
    writeFileSync(tmp, `${JSON.stringify(self)}\n`);
    renameSync(tmp, join(dataDir, HOLDER_FILE));
    return new DataDirLock(db, dataDir, previous);
  }

  /** Gives the lock up and removes the holder file. Safe to call twice. */
  release(): void {
    if (!this.db.open) return;
    rmSync(join(this.dir, HOLDER_FILE), { force: true });
    this.db.close();
  }
}

/** The holder named in the directory, if its file is there and readable. */
function readHolder(dataDir: string): LockHolder | null {
  try {
    const h = JSON.parse(readFileSync(join(dataDir, HOLDER_FILE), 'utf8')) as LockHolder;
    return typeof h.pid === 'number' ? h : null;
  } catch {
    return null;
  }
}

function describe(h: LockHolder | null): string {
  return h
    ? `pid ${h.pid} on host ${h.host}, started at ${h.startedAt}`
    : 'a process that has not named itself yet';
}
