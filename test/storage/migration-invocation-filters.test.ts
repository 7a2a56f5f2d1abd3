import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { SqliteDatabase } from '../../src/storage/sqlite/sqlite-database.js';
import { SqliteInvocationStore } from '../../src/storage/sqlite/sqlite-invocation-store.js';
import { migratedBefore } from '../helpers/migrated-before.js';

const MIGRATION = '0007_invocation_filters';

let dir: string;
afterEach(() => rmSync(dir, { recursive: true, force: true }));

describe(`migration ${MIGRATION}`, () => {
  it('fills the tool, agent and environment columns of stored invocations, so the filters find them', async () => {
    dir = mkdtempSync(join(tmpdir(), 'gatehouse-migration-'));
    const file = join(dir, 'gatehouse.db');
    const raw = await migratedBefore(file, MIGRATION);
    // More rows than one backfill batch, so the batches follow on.
    const count = 1203;
    const insert = raw.prepare(
      'insert into invocations (id, tenant, principal, idempotency_key, attempt, request_hash, status, tool_id, record, created_at, updated_at) values (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)',
    );
    raw.transaction(() => {
      for (let n = 0; n < count; n++) {
        const id = `inv-${String(n).padStart(5, '0')}`;
        const at = new Date(Date.UTC(2026, 0, 1) + n * 1000).toISOString();
        const record = {
          id,
          tenant: 'acme',
          tool: { id: n % 2 ? 'demo/echo' : 'demo/other', version: '1.0.0' },
          agent: { id: n % 3 ? 'coder' : 'reviewer-bot', version: '1.0.0' },
          environment: n % 5 ? 'dev' : 'prod',
        };
        const tool = `${record.tool.id}@1.0.0`;
        insert.run(
          id,
          'acme',
          'p-1',
          `k-${n}`,
          1,
          'h',
          'observed',
          tool,
          JSON.stringify(record),
          at,
          at,
        );
      }
    })();
    raw.close();

    const db = await SqliteDatabase.open({ file });
    try {
      const empty = db.raw
        .prepare(
          'select count(*) as n from invocations where tool_name is null or agent_id is null or environment is null',
        )
        .get();
      expect(empty).toEqual({ n: 0 });
      const store = new SqliteInvocationStore(db);
      const found = await store.list('acme', {
        limit: 5000,
        tool: { id: 'demo/echo' },
        agent: 'reviewer-bot',
        environment: 'prod',
      });
      const expected = Array.from({ length: count }, (_, n) => n)
        .filter((n) => n % 2 === 1 && n % 3 === 0 && n % 5 === 0)
        .reverse()
        .map((n) => `inv-${String(n).padStart(5, '0')}`);
      expect(expected.length).toBeGreaterThan(30);
      expect(found.map((r) => r.id)).toEqual(expected);
    } finally {
      await db.close();
    }
  });
});
