import { sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import { PostgresDatabase } from '../../src/storage/postgres/postgres-database.js';
import { appendLedger } from '../../src/storage/postgres/postgres-ledger.js';
import { migrations } from '../../src/storage/schema/migrations.js';
import { PostgresOutboxFeed } from '../../src/storage/postgres/postgres-outbox-feed.js';
import { PostgresAuditStore } from '../../src/storage/postgres/postgres-audit-store.js';
import { nodeHash } from '../../src/audit/index.js';
import { freshPostgresDatabase, missingPostgres } from '../helpers/postgres.js';
import { skipWithout } from '../helpers/prerequisites.js';

describe.skipIf(skipWithout('PostgreSQL', missingPostgres()))('PostgresDatabase', () => {
  it('migrates once when several nodes (of one connection each) open a new database together', async () => {
    const url = await freshPostgresDatabase();
    const dbs = await Promise.all([1, 2, 3].map(() => PostgresDatabase.open({ url, poolSize: 1 })));
    try {
      const applied = await sql<{
        name: string;
      }>`select name from kysely_migration order by name`.execute(dbs[0]!.kysely);
      // Each migration once: the three nodes raced, one applied them, the others found them done.
      expect(applied.rows.map((r) => r.name)).toEqual(Object.keys(migrations('postgres')).sort());
    } finally {
      await Promise.all(dbs.map((d) => d.close()));
    }
  });

  it('commits concurrent writes of one node in one transaction, a failing one alone rolled back', async () => {
    const db = await PostgresDatabase.open({ url: await freshPostgresDatabase() });
    try {
      const txids = new Set<string>();
      const insert = (id: string) =>
        db.write(async (tx) => {
          const r = await sql<{ x: string }>`select txid_current()::text as x`.execute(tx);
          txids.add(r.rows[0]!.x);
          await tx.insertInto('tenants').values({ id, name: id, created_at: 'now' }).execute();
          return id;
        });
      const results = await Promise.allSettled([
        insert('a'),
        insert('b'),
        insert('a'),
        insert('c'),
      ]);
      expect(results.map((r) => r.status)).toEqual([
        'fulfilled',
        'fulfilled',
        'rejected',
        'fulfilled',
      ]);
      expect(txids.size).toBe(1);
      const rows = await db.kysely.selectFrom('tenants').select('id').orderBy('id').execute();
      expect(rows.map((r) => r.id)).toEqual(['a', 'b', 'c']);
    } finally {
      await db.close();
    }
  });

  it("begins a node's next batch while the previous holds the write lock, and commits it after", async () => {
    const db = await PostgresDatabase.open({ url: await freshPostgresDatabase(), poolSize: 3 });
    const waitingForLock = async () =>
      (
        await sql<{ n: number }>`select count(*)::int as n from pg_locks
          where locktype = 'advisory' and not granted
            and database = (select oid from pg_database where datname = current_database())`.execute(
          db.kysely,
        )
      ).rows[0]!.n;
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    try {
      let holding!: () => void;
      const inside = new Promise<void>((r) => (holding = r));
      const first = db.write(async (tx) => {
        await tx.insertInto('tenants').values({ id: 'a', name: 'a', created_at: 'now' }).execute();
        holding();
        await held;
      });
      await inside;
      const second = db.write(async (tx) => {
        const seen = await tx.selectFrom('tenants').select('id').execute();
        await tx.insertInto('tenants').values({ id: 'b', name: 'b', created_at: 'now' }).execute();
        return seen.map((r) => r.id);
      });
      // The second batch has begun and waits for the lock in the database, not in this node.
      let waiting = 0;
      for (let i = 0; i < 100 && waiting === 0; i++) {
        waiting = await waitingForLock();
        if (waiting === 0) await new Promise((r) => setTimeout(r, 10));
      }
      expect(waiting).toBe(1);
      release();
      await first;
      // It took the lock once the first committed, so it saw the first's write.
      expect(await second).toEqual(['a']);
      expect(await waitingForLock()).toBe(0);
    } finally {
      release();
      await db.close();
    }
  });

  it('stores large values compressed with lz4 when the server has it, else with pglz', async () => {
    const db = await PostgresDatabase.open({ url: await freshPostgresDatabase() });
    try {
      const lz4 = (
        await sql<{ lz4: boolean }>`select 'lz4' = any(enumvals) as lz4 from pg_settings
          where name = 'default_toast_compression'`.execute(db.kysely)
      ).rows[0]!.lz4;
      const name = 'a compressible name '.repeat(1_000);
      await db.write((tx) =>
        tx.insertInto('tenants').values({ id: 'big', name, created_at: 'now' }).execute(),
      );
      const row = await sql<{ method: string; name: string }>`
        select pg_column_compression(name) as method, name from tenants where id = 'big'`.execute(
        db.kysely,
      );
      expect(row.rows[0]).toEqual({ method: lz4 ? 'lz4' : 'pglz', name });
    } finally {
      await db.close();
    }
  });

  it('keeps every complete subtree of one tree whose appends alternate between two nodes', async () => {
    const url = await freshPostgresDatabase();
    const nodes = await Promise.all([1, 2].map(() => PostgresDatabase.open({ url, poolSize: 2 })));
    try {
      const stores = nodes.map((n) => new PostgresAuditStore(n));
      const draft = (n: number) => ({
        tenant: 'acme',
        type: 'tenant.created',
        at: '2026-01-01T00:00:00.000Z',
        actor: 'test',
        subject: `record/${n}`,
        data: { n },
      });
      // Rounds of appends of 1 to 7 records, a few at once on each node (one batch each), so
      // each batch starts at a size the other node's batches left.
      let n = 0;
      for (let round = 0; round < 8; round++) {
        await Promise.all(
          stores.flatMap((store, i) =>
            [0, 1].map(() => {
              const count = ((round + i) % 7) + 1;
              const records = Array.from({ length: count }, () => draft(n++));
              return store.append(records);
            }),
          ),
        );
      }
      const size = await stores[0]!.size('acme');
      expect(size).toBe(n);
      const leaves = (await stores[1]!.records('acme', 0, size)).map((r) =>
        Buffer.from(r.leafHash, 'base64'),
      );
      const expected = (level: number, idx: number): Buffer =>
        level === 0
          ? leaves[idx]!
          : nodeHash(expected(level - 1, 2 * idx), expected(level - 1, 2 * idx + 1));
      const refs = [];
      for (let level = 1; 2 ** level <= size; level++)
        for (let idx = 0; (idx + 1) * 2 ** level <= size; idx++) refs.push({ level, index: idx });
      const stored = await stores[0]!.subtreeHashes('acme', refs);
      expect(stored.map((h) => h?.toString('hex'))).toEqual(
        refs.map((r) => expected(r.level, r.index).toString('hex')),
      );
    } finally {
      await Promise.all(nodes.map((d) => d.close()));
    }
  });

  it("wakes another node's event-stream readers when this node commits events", async () => {
    const url = await freshPostgresDatabase();
    const a = await PostgresDatabase.open({ url, poolSize: 2 });
    const b = await PostgresDatabase.open({ url, poolSize: 2 });
    try {
      const feed = new PostgresOutboxFeed(b);
      let woken!: () => void;
      const wake = new Promise<void>((r) => (woken = r));
      feed.subscribe(() => woken());
      await a.write((tx) =>
        appendLedger(tx, {
          audit: [],
          events: [
            {
              type: 'ToolInvocationCompleted',
              tenant: 'acme',
              subject: 'invocation/1',
              at: '2026-01-01T00:00:00.000Z',
              data: { n: 1 },
            },
          ],
        }),
      );
      await wake;
      expect((await feed.since(0, 10)).map((e) => e.subject)).toEqual(['invocation/1']);
    } finally {
      await a.close();
      await b.close();
    }
  });

  it('never lets a reader skip an event whose transaction commits after one with a later id', async () => {
    const url = await freshPostgresDatabase();
    const a = await PostgresDatabase.open({ url, poolSize: 2 });
    const b = await PostgresDatabase.open({ url, poolSize: 2 });
    const event = (subject: string) => ({
      type: 'ToolInvocationCompleted' as const,
      tenant: 'acme',
      subject,
      at: '2026-01-01T00:00:00.000Z',
      data: {},
    });
    try {
      const feed = new PostgresOutboxFeed(b);
      // A reader as the event-stream hub is: from its cursor, in id order, all the time.
      const seen: string[] = [];
      let cursor = 0;
      let reading = true;
      const read = (async () => {
        while (reading) {
          for (const e of await feed.since(cursor, 100)) {
            seen.push(e.subject);
            cursor = e.seq;
          }
          await new Promise((r) => setTimeout(r, 5));
        }
      })();
      // Node A takes the first id and holds its transaction open; node B takes the next one.
      let release!: () => void;
      const held = new Promise<void>((r) => (release = r));
      let tookId!: () => void;
      const took = new Promise<void>((r) => (tookId = r));
      const first = a.write(async (tx) => {
        await appendLedger(tx, { audit: [], events: [event('first')] });
        tookId();
        await held;
      });
      await took;
      const second = b.write((tx) => appendLedger(tx, { audit: [], events: [event('second')] }));
      // Whatever B may commit meanwhile is read before A commits.
      await new Promise((r) => setTimeout(r, 300));
      release();
      await Promise.all([first, second]);
      const top = await feed.head();
      while (cursor < top) await new Promise((r) => setTimeout(r, 5));
      reading = false;
      await read;
      const stored = (await feed.since(0, 10)).map((e) => e.subject);
      expect(stored.sort()).toEqual(['first', 'second']);
      // Every stored event reached the reader, in its order of ids.
      expect(seen).toEqual((await feed.since(0, 10)).map((e) => e.subject));
    } finally {
      await a.close();
      await b.close();
    }
  });
});
