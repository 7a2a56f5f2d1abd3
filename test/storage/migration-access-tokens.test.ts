import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { sha256Hex } from '../../src/core/index.js';
import { SqliteDatabase } from '../../src/storage/sqlite/sqlite-database.js';
import { SqliteOutboxFeed } from '../../src/storage/sqlite/sqlite-outbox-feed.js';
import { SqliteTenancyStore } from '../../src/storage/sqlite/sqlite-tenancy-store.js';
import { migratedBefore } from '../helpers/migrated-before.js';

const MIGRATION = '0005_access_tokens';

let dir: string;
afterEach(() => rmSync(dir, { recursive: true, force: true }));

describe(`migration ${MIGRATION}`, () => {
  it("moves each principal's token to the tokens table with an expiry, and fills the owners of events and approvals", async () => {
    dir = mkdtempSync(join(tmpdir(), 'gatehouse-migration-'));
    const file = join(dir, 'gatehouse.db');
    const raw = await migratedBefore(file, MIGRATION);
    const at = '2026-01-01T00:00:00.000Z';
    const insert = (sql: string, ...values: unknown[]) => raw.prepare(sql).run(...values);
    insert(
      'insert into principals (id, tenant, name, roles, project, agent_id, agent_version, token_hash, created_at) values (?, ?, ?, ?, ?, ?, ?, ?, ?)',
      'p-agent',
      'acme',
      'bot',
      '["agent"]',
      'web',
      'bot',
      '1.0.0',
      sha256Hex('old-secret'),
      at,
    );
    insert(
      'insert into invocations (id, tenant, principal, idempotency_key, attempt, request_hash, status, tool_id, record, created_at, updated_at) values (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)',
      'inv-1',
      'acme',
      'p-agent',
      'k',
      1,
      'h',
      'awaiting_approval',
      'demo/echo@1.0.0',
      '{}',
      at,
      at,
    );
    insert(
      'insert into approvals (id, tenant, invocation_id, tool_id, status, version, record, expires_at, created_at, updated_at) values (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)',
      'ap-1',
      'acme',
      'inv-1',
      'demo/echo@1.0.0',
      'pending',
      1,
      '{}',
      at,
      at,
      at,
    );
    for (const subject of ['invocation/inv-1', 'approval/ap-1', 'tool/demo/echo@1.0.0'])
      insert(
        'insert into outbox (tenant, type, subject, at, data) values (?, ?, ?, ?, ?)',
        'acme',
        'X',
        subject,
        at,
        '{}',
      );
    raw.close();

    const startedAt = Date.now();
    const db = await SqliteDatabase.open({ file });
    try {
      const { principals, tokens } = await new SqliteTenancyStore(db).loadAll();
      expect(principals).toEqual([
        {
          id: 'p-agent',
          tenant: 'acme',
          name: 'bot',
          roles: ['agent'],
          project: 'web',
          agent: { id: 'bot', version: '1.0.0' },
          createdAt: at,
        },
      ]);
      expect(tokens).toHaveLength(1);
      const [token] = tokens;
      expect(token).toMatchObject({
        tenant: 'acme',
        principal: 'p-agent',
        hash: sha256Hex('old-secret'),
        createdAt: at,
        createdBy: 'migration',
        revokedAt: null,
      });
      // Tokens made before expiry existed end 90 days after the upgrade.
      const ninety = 90 * 24 * 3600 * 1000;
      expect(Date.parse(token!.expiresAt)).toBeGreaterThanOrEqual(startedAt + ninety - 5000);
      expect(Date.parse(token!.expiresAt)).toBeLessThanOrEqual(Date.now() + ninety);
      const events = await new SqliteOutboxFeed(db).after('acme', 0, 10);
      expect(events.map((e) => [e.subject, e.owner])).toEqual([
        ['invocation/inv-1', 'p-agent'],
        ['approval/ap-1', 'p-agent'],
        ['tool/demo/echo@1.0.0', undefined],
      ]);
      expect(db.raw.prepare("select requested_by from approvals where id = 'ap-1'").get()).toEqual({
        requested_by: 'p-agent',
      });
      const columns = db.raw.prepare('pragma table_info(principals)').all() as { name: string }[];
      expect(columns.map((c) => c.name)).not.toContain('token_hash');
    } finally {
      await db.close();
    }
  });
});
