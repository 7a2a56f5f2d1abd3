import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Kysely } from 'kysely';
import { afterEach, describe, expect, it } from 'vitest';
import { AuditLog, verifyInclusion } from '../../src/audit/index.js';
import type { AuditRecordDraft } from '../../src/core/index.js';
import { ManualClock, isGatehouseError } from '../../src/core/index.js';
import { backfillAuditNodes } from '../../src/storage/schema/backfill-audit-nodes.js';
import { migrations } from '../../src/storage/schema/migrations.js';
import { SqliteAuditStore } from '../../src/storage/sqlite/sqlite-audit-store.js';
import { SqliteDatabase } from '../../src/storage/sqlite/sqlite-database.js';

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

function dbFile(): string {
  const dir = mkdtempSync(join(tmpdir(), 'gatehouse-audit-nodes-'));
  dirs.push(dir);
  return join(dir, 'g.db');
}

const draft = (tenant: string, n: number): AuditRecordDraft => ({
  tenant,
  type: 'invocation.observed',
  subject: `invocation/${n}`,
  at: '2026-01-01T00:00:00.000Z',
  actor: 'p-1',
  data: { n },
});

/** Appends `n` records to each tenant, in batches of 100 (two tenants interleaved). */
async function fill(store: SqliteAuditStore, tenants: Record<string, number>): Promise<void> {
  for (const [tenant, n] of Object.entries(tenants)) {
    for (let i = 0; i < n; i += 100) {
      await store.append(
        Array.from({ length: Math.min(100, n - i) }, (_, k) => draft(tenant, i + k)),
      );
    }
  }
}

/** Every stored subtree row, in key order. */
function nodeRows(db: SqliteDatabase): unknown[] {
  return db.raw.prepare('SELECT tenant, level, idx, hash FROM audit_nodes ORDER BY 1, 2, 3').all();
}

/** Turns a data file back into one written before migration 0004: no subtree table. */
function forgetNodes(db: SqliteDatabase): void {
  db.raw.exec(
    "DROP TABLE audit_nodes; DELETE FROM kysely_migration WHERE name = '0004_audit_nodes';",
  );
}

const LOG = { acme: 1000, globex: 333 };
const ROWS = 1000 - 6 + (333 - 5); // n - popcount(n) per tenant

describe('migration 0004: subtree hashes of logs written before they were kept', () => {
  it('migration 0004 backfills them, the same as appends store them, and proofs work', async () => {
    const file = dbFile();
    const db = await SqliteDatabase.open({ file });
    await fill(new SqliteAuditStore(db), LOG);
    const appended = nodeRows(db);
    expect(appended).toHaveLength(ROWS);
    forgetNodes(db);
    // What opening a file from before 0004 runs (later migrations are recorded as run already,
    // and the migrator refuses to run an earlier one after them, so the test runs it itself).
    await migrations('sqlite')['0004_audit_nodes']!.up(db.kysely);
    try {
      expect(nodeRows(db)).toEqual(appended);
      const store = new SqliteAuditStore(db);
      await store.append([draft('acme', 1000)]);
      const log = new AuditLog({
        store,
        signer: { sign: () => ({ keyid: 'k', sig: Buffer.alloc(64) }) },
        clock: new ManualClock(),
      });
      const a = await log.inclusion('acme', 777, 1001);
      const b64 = (s: string) => Buffer.from(s, 'base64');
      expect(verifyInclusion(b64(a.leafHash), 777, 1001, a.proof.map(b64), b64(a.rootHash))).toBe(
        true,
      );
    } finally {
      await db.close();
    }
  });

  it('resumes after the last committed batch when stopped half-way', async () => {
    const db = await SqliteDatabase.open({ file: dbFile() });
    try {
      await fill(new SqliteAuditStore(db), LOG);
      const appended = nodeRows(db);
      forgetNodes(db);
      db.raw.exec(
        'CREATE TABLE audit_nodes (tenant TEXT NOT NULL, level INTEGER NOT NULL, idx BIGINT NOT NULL, hash BLOB NOT NULL, PRIMARY KEY (tenant, level, idx)) WITHOUT ROWID',
      );
      const kysely = db.kysely as unknown as Kysely<unknown>;
      let batches = 0;
      const crash = new Error('crash');
      await expect(
        backfillAuditNodes(kysely, {
          batch: 64,
          onBatch: () => {
            if (++batches === 5) throw crash;
          },
        }),
      ).rejects.toBe(crash);
      // Five committed batches: the subtrees of the first 5 × 64 leaves of the first tenant.
      type Row = { tenant: string; level: number; idx: number };
      expect(nodeRows(db)).toEqual(
        (appended as Row[]).filter((r) => r.tenant === 'acme' && (r.idx + 1) * 2 ** r.level <= 320),
      );
      expect(nodeRows(db)).toHaveLength(320 - 2);
      // Resuming writes each remaining subtree once (a repeat would break the primary key).
      await backfillAuditNodes(kysely, { batch: 64 });
      expect(nodeRows(db)).toEqual(appended);
      await backfillAuditNodes(kysely, { batch: 64 });
      expect(nodeRows(db)).toEqual(appended);
      await expect(backfillAuditNodes(kysely, { batch: 63 })).rejects.toThrow(/even/);
    } finally {
      await db.close();
    }
  });
});

describe('SqliteAuditStore appends', () => {
  it('refuse a record whose sibling subtree is missing, and write nothing', async () => {
    const db = await SqliteDatabase.open({ file: dbFile() });
    try {
      const store = new SqliteAuditStore(db);
      await fill(store, { acme: 3 });
      db.raw.prepare('DELETE FROM audit_nodes WHERE level = 1 AND idx = 0').run();
      const failed = await store.append([draft('acme', 3)]).then(
        () => null,
        (err: unknown) => err,
      );
      expect(isGatehouseError(failed, 'INTERNAL')).toBe(true);
      expect(String((failed as Error).message)).toMatch(/subtree 1\/0 is missing/);
      expect(await store.size('acme')).toBe(3);
      expect(nodeRows(db)).toEqual([]);
    } finally {
      await db.close();
    }
  });
});
