import { sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import { PostgresDatabase } from '../../src/storage/postgres/postgres-database.js';
import { appendLedger } from '../../src/storage/postgres/postgres-ledger.js';
import { migrations } from '../../src/storage/schema/migrations.js';
import { PostgresOutboxFeed } from '../../src/storage/postgres/postgres-outbox-feed.js';
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
