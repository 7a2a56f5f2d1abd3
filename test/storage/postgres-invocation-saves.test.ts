import { describe, expect, it } from 'vitest';
import { verifyAuditLog } from '../../src/audit/index.js';
import type { InvocationRecord, InvocationStep } from '../../src/invocation/index.js';
import { PostgresAuditStore } from '../../src/storage/postgres/postgres-audit-store.js';
import { PostgresDatabase } from '../../src/storage/postgres/postgres-database.js';
import { PostgresInvocationStore } from '../../src/storage/postgres/postgres-invocation-store.js';
import { invocationRecord, ledgerOf } from '../helpers/invocation-records.js';
import { migratedPostgresDatabase, missingPostgres } from '../helpers/postgres.js';
import { skipWithout } from '../helpers/prerequisites.js';

// The steps one node saves at once share one batch and are written together (multi-row
// statements): each must still settle on its own, and the audit tree stay provable.

const record = invocationRecord;
const step = (r: InvocationRecord, audits = 1, over: Partial<InvocationStep> = {}) => ({
  record: r,
  ledger: ledgerOf(r, audits),
  seal: (last: { index: number }) => ({ sealedAt: last.index }),
  ...over,
});
const outcome = (p: PromiseSettledResult<unknown>) =>
  p.status === 'fulfilled' ? p.value : (p.reason as { code?: string }).code;

describe.skipIf(skipWithout('PostgreSQL', missingPostgres()))('PostgreSQL invocation saves', () => {
  it('settles each save of one batch on its own (stale fences, taken keys) and looks keys up together', async () => {
    const db = await PostgresDatabase.open({ url: await migratedPostgresDatabase(), poolSize: 2 });
    const store = new PostgresInvocationStore(db);
    try {
      // Five records stored before (indices 0–6), so the batch's subtrees need stored siblings.
      for (const n of [1, 2, 3, 4, 5])
        await store.save(step(record(n, { status: 'running' }), n === 5 ? 3 : 1));
      // One batch written together: a stale fence fails alone, the others are stored.
      const first = await Promise.allSettled([
        store.save(step(record(1), 2, { expectedStatus: 'running' })),
        store.save(step(record(2), 1, { expectedStatus: 'queued' })),
        ...[6, 7, 8, 9, 10, 11, 12].map((n) => store.save(step(record(n), 1 + (n % 3)))),
      ]);
      expect(first.map(outcome)).toEqual([
        { index: 8, treeSize: 9 },
        'CONFLICT',
        ...[9, 11, 14, 15, 17, 20, 21].map((index) => ({ index, treeSize: index + 1 })),
      ]);
      // A key another node stored first makes its bulk go one by one: it fails alone.
      const second = await Promise.allSettled([
        store.save(step(record(13), 2)),
        store.save(step(record(14, { idempotencyKey: 'key-3' }))),
        store.save(step(record(3), 1, { expectedStatus: 'running' })),
      ]);
      expect(second.map(outcome)).toEqual([
        { index: 23, treeSize: 24 },
        'CONFLICT',
        { index: 24, treeSize: 25 },
      ]);
      expect((await store.get('acme', record(2).id))?.status).toBe('running');
      expect((await store.get('acme', record(3).id))?.status).toBe('observed');
      expect(await store.get('acme', record(14).id)).toBeUndefined();
      expect(await store.receipt('acme', record(13).id)).toEqual({ sealedAt: 23 });
      expect((await store.get('acme', record(1).id))?.audit).toEqual({ index: 8, treeSize: 9 });
      // Lookups by key of one moment share a statement; each gets its own key's newest attempt.
      await store.save(step(record(15, { idempotencyKey: 'key-6', attempt: 2 })));
      const found = await Promise.all(
        [
          ['acme', 'p-1', 'key-6'],
          ['acme', 'p-1', 'key-7'],
          ['acme', 'p-2', 'key-7'],
          ['globex', 'p-1', 'key-7'],
          ['acme', 'p-1', 'key-99'],
        ].map(([t, p, k]) => store.findByKey(t!, p!, k!)),
      );
      expect(found.map((r) => r?.id)).toEqual([
        record(15).id,
        record(7).id,
        undefined,
        undefined,
        undefined,
      ]);
      // A batch too big for one statement's parameters is written in several, as one.
      const many = Array.from({ length: 1000 }, (_, i) => 100 + i);
      const big = await Promise.all(many.map((n) => store.save(step(record(n)))));
      expect(big.map((p) => p.index)).toEqual(many.map((_, i) => 26 + i));
      expect(await store.receipt('acme', record(1099).id)).toEqual({ sealedAt: 1025 });
      // Every stored subtree hash is the one recomputed from the records.
      const verdict = await verifyAuditLog(new PostgresAuditStore(db), 'acme', { keys: [] });
      expect(verdict).toMatchObject({ ok: true, size: 1026 });
    } finally {
      await db.close();
    }
  });
});
