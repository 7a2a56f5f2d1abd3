import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { SqliteDatabase } from '../../src/storage/sqlite/sqlite-database.js';

let dir: string;
let file: string;
const opened: SqliteDatabase[] = [];

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'gatehouse-db-'));
  file = join(dir, 'g.db');
});

afterEach(async () => {
  for (const db of opened.splice(0)) await db.close();
  rmSync(dir, { recursive: true, force: true });
});

async function open(): Promise<SqliteDatabase> {
  const db = await SqliteDatabase.open({ file });
  opened.push(db);
  return db;
}

const insertTenant = (db: SqliteDatabase, id: string) =>
  db.run(
    db.kysely
      .insertInto('tenants')
      .values({ id, name: id, created_at: '2026-01-01T00:00:00.000Z' }),
  );

const tenantIds = (db: SqliteDatabase) =>
  db.all(db.kysely.selectFrom('tenants').select('id').orderBy('id')).map((r) => r.id);

describe('SqliteDatabase', () => {
  it('runs in WAL mode with full synchronous commits by default', async () => {
    const db = await open();
    expect(db.raw.pragma('journal_mode', { simple: true })).toBe('wal');
    expect(db.raw.pragma('synchronous', { simple: true })).toBe(2);
  });

  it('commits writes queued in one turn in a single transaction', async () => {
    const db = await open();
    const transaction = vi.spyOn(db.raw, 'transaction');
    const ids = Array.from({ length: 100 }, (_, i) => `t${String(i).padStart(3, '0')}`);
    const results = await Promise.all(
      ids.map((id) =>
        db.write(() => {
          insertTenant(db, id);
          return db.raw.inTransaction ? id : 'outside a transaction';
        }),
      ),
    );
    expect(results).toEqual(ids);
    expect(transaction).toHaveBeenCalledTimes(1);
    expect(tenantIds(db)).toEqual(ids);
  });

  it('rejects a failing write alone and commits the rest of its batch', async () => {
    const db = await open();
    const results = await Promise.allSettled([
      db.write(() => insertTenant(db, 'a')),
      db.write(() => {
        insertTenant(db, 'b');
        throw new Error('b failed after writing');
      }),
      db.write(() => insertTenant(db, 'a')), // duplicate key: fails in SQLite itself
      db.write(() => {
        insertTenant(db, 'c');
        return 'c done';
      }),
    ]);
    expect(results.map((r) => r.status)).toEqual([
      'fulfilled',
      'rejected',
      'rejected',
      'fulfilled',
    ]);
    expect((results[1] as PromiseRejectedResult).reason).toEqual(
      new Error('b failed after writing'),
    );
    expect((results[2] as PromiseRejectedResult).reason).toMatchObject({
      code: 'SQLITE_CONSTRAINT_PRIMARYKEY',
    });
    expect((results[3] as PromiseFulfilledResult<string>).value).toBe('c done');
    expect(tenantIds(db)).toEqual(['a', 'c']);
  });

  it('keeps data and migrates nothing twice when reopened', async () => {
    const first = await open();
    await first.write(() => insertTenant(first, 'kept'));
    const migrationsRun = first.raw.prepare('select count(*) as n from kysely_migration').get();
    await first.close();

    const second = await open();
    expect(tenantIds(second)).toEqual(['kept']);
    expect(second.raw.prepare('select count(*) as n from kysely_migration').get()).toEqual(
      migrationsRun,
    );
    await second.write(() => insertTenant(second, 'more'));
    expect(tenantIds(second)).toEqual(['kept', 'more']);
  });

  it('commits writes still queued when it is closed, and refuses writes after', async () => {
    const db = await open();
    const pending = db.write(() => insertTenant(db, 'late'));
    await db.close();
    await expect(pending).resolves.toMatchObject({ changes: 1 });
    await expect(db.write(() => insertTenant(db, 'after'))).rejects.toThrow('database is closed');
    await db.close(); // safe to repeat

    const reopened = await open();
    expect(tenantIds(reopened)).toEqual(['late']);
  });

  it('makes a committed write visible to another connection', async () => {
    const writer = await open();
    const reader = await open();
    await writer.write(() => insertTenant(writer, 'seen'));
    expect(tenantIds(reader)).toEqual(['seen']);
  });
});
