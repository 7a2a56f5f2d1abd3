import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { Checkpointer } from '../../src/storage/sqlite/checkpointer.js';
import { SqliteDatabase } from '../../src/storage/sqlite/sqlite-database.js';

let dir: string;
let file: string;
const closing: (() => unknown)[] = [];

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'gatehouse-ckpt-'));
  file = join(dir, 'g.db');
});

afterEach(async () => {
  for (const close of closing.splice(0).reverse()) await close();
  rmSync(dir, { recursive: true, force: true });
});

function rawDatabase(): Database.Database {
  const raw = new Database(file);
  raw.pragma('journal_mode = WAL');
  raw.exec('CREATE TABLE t (id INTEGER PRIMARY KEY, body TEXT)');
  closing.push(() => raw.close());
  return raw;
}

/** Frames in the WAL that the database file does not hold yet. */
function unCheckpointed(raw: Database.Database): number {
  const [r] = raw.pragma('wal_checkpoint(NOOP)') as { log: number; checkpointed: number }[];
  return r!.log - r!.checkpointed;
}

describe('Checkpointer', () => {
  it('checkpoints the WAL from a worker thread, SQLite’s own checkpoint off', async () => {
    const db = await SqliteDatabase.open({ file });
    closing.push(() => db.close());
    expect(db.raw.pragma('wal_autocheckpoint', { simple: true })).toBe(0);
    for (let i = 0; i < 50; i++)
      await db.write(() =>
        db.raw.prepare('INSERT INTO tenants VALUES (?, ?, ?)').run(`t${i}`, 'x'.repeat(3000), ''),
      );
    await vi.waitFor(() => expect(db.checkpointer!.state.done).toBeGreaterThan(0), {
      timeout: 5000,
    });
    await vi.waitFor(() => expect(unCheckpointed(db.raw)).toBe(0), { timeout: 5000 });
    // The next write restarts the WAL from its start: it does not grow past what one batch needs.
    const walBefore = statSync(`${file}-wal`).size;
    await db.write(() => db.raw.prepare('INSERT INTO tenants VALUES (?, ?, ?)').run('z', 'z', ''));
    expect(statSync(`${file}-wal`).size).toBeLessThanOrEqual(walBefore);
  });

  it('replaces a worker that dies, and after three lost goes back to SQLite’s own checkpoint', async () => {
    const raw = rawDatabase();
    const dying = `require('node:worker_threads').parentPort.on('message', () => process.exit(3));`;
    const checkpointer = new Checkpointer(file, raw, dying);
    closing.push(() => checkpointer.close());
    expect(raw.pragma('wal_autocheckpoint', { simple: true })).toBe(0);
    raw.prepare('INSERT INTO t (body) VALUES (?)').run('a');
    checkpointer.committed();
    await vi.waitFor(() => expect(checkpointer.state.degraded).toBe(true), { timeout: 5000 });
    expect(checkpointer.state).toMatchObject({ lost: 3, done: 0 });
    expect(raw.pragma('wal_autocheckpoint', { simple: true })).toBe(1000);
    // On its way back, what the WAL held was checkpointed on this thread.
    expect(unCheckpointed(raw)).toBe(0);
  });

  it('counts a worker whose checkpoint fails as lost and tries a fresh one', async () => {
    const raw = rawDatabase();
    const failingOnce = `
      const { parentPort, workerData } = require('node:worker_threads');
      parentPort.on('message', () => parentPort.postMessage({ error: 'SQLITE_IOERR' }));`;
    const checkpointer = new Checkpointer(file, raw, failingOnce);
    closing.push(() => checkpointer.close());
    raw.prepare('INSERT INTO t (body) VALUES (?)').run('a');
    checkpointer.committed();
    await vi.waitFor(() => expect(checkpointer.state.lost).toBeGreaterThanOrEqual(1), {
      timeout: 5000,
    });
    expect(checkpointer.state.done).toBe(0);
  });

  it('replaces a worker whose checkpoint never answers', async () => {
    const raw = rawDatabase();
    const stuck = `require('node:worker_threads').parentPort.on('message', () => {});`;
    const checkpointer = new Checkpointer(file, raw, stuck, 300);
    closing.push(() => checkpointer.close());
    raw.prepare('INSERT INTO t (body) VALUES (?)').run('a');
    checkpointer.committed();
    await vi.waitFor(() => expect(checkpointer.state.lost).toBeGreaterThanOrEqual(1), {
      timeout: 5000,
    });
    expect(checkpointer.state.done).toBe(0);
  });
});
