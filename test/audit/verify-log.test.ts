import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  AuditLog,
  SigningKeyring,
  emptyRoot,
  signCheckpoint,
  verifyAuditLog,
} from '../../src/audit/index.js';
import type { AuditRecordDraft } from '../../src/core/index.js';
import { ManualClock } from '../../src/core/index.js';
import { SqliteAuditStore, SqliteDatabase } from '../../src/storage/index.js';

let dir: string;
let db: SqliteDatabase;
let store: SqliteAuditStore;
let keyring: SigningKeyring;
let log: AuditLog;

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'gatehouse-verify-log-'));
  db = await SqliteDatabase.open({ file: join(dir, 'g.db') });
  store = new SqliteAuditStore(db);
  const clock = new ManualClock();
  keyring = await SigningKeyring.open(join(dir, 'keys'), clock);
  log = new AuditLog({ store, signer: keyring, clock });
});

afterEach(async () => {
  await db.close();
  await rm(dir, { recursive: true, force: true });
});

const draft = (n: number): AuditRecordDraft => ({
  tenant: 'acme',
  type: 'test.filled',
  subject: `fill/${n}`,
  at: '2026-01-01T00:00:00.000Z',
  actor: 'system',
  data: { n },
});

/** The index and reason of the fault verifyAuditLog finds in the log; fails if it finds none. */
async function fault(): Promise<[number | undefined, string]> {
  const verdict = await verifyAuditLog(store, 'acme', keyring.jwks());
  if (verdict.ok) throw new Error('expected the log to fail verification');
  return [verdict.index, verdict.reason];
}

/** Appends records `from` ≤ n < `to` in one transaction. */
const fill = (from: number, to: number) =>
  store.append(Array.from({ length: to - from }, (_, i) => draft(from + i)));

describe('verifyAuditLog', () => {
  // 12,000 records span three of its chunks, with checkpoints in each and at their edges.
  async function checkpointedLog(): Promise<void> {
    for (const [from, to] of [
      [0, 1],
      [1, 5000],
      [5000, 5001],
      [5001, 9999],
      [9999, 12_000],
    ] as const) {
      await fill(from, to);
      await log.checkpoint('acme');
    }
  }

  it('passes an intact log, counting the checkpoints of every chunk', async () => {
    await log.checkpoint('acme'); // of the empty log
    await checkpointedLog();
    const verdict = await verifyAuditLog(store, 'acme', keyring.jwks());
    expect(verdict).toEqual({
      ok: true,
      tenant: 'acme',
      size: 12_000,
      rootHash: (await log.checkpoint('acme')).rootHash,
      checkpoints: 6,
    });
  });

  it('names the subtree whose stored hash was changed, at the record that completed it', async () => {
    await checkpointedLog();
    db.raw
      .prepare('UPDATE audit_nodes SET hash = zeroblob(32) WHERE level = 3 AND idx = 700')
      .run();
    expect(await fault()).toEqual([
      5607,
      'the stored hash of the subtree over records 5600..5607 differs from the one recomputed from them: a record in it was changed, or the subtree was; proofs and checkpoints are served from it',
    ]);
    db.raw.prepare('DELETE FROM audit_nodes WHERE level = 3 AND idx = 700').run();
    const [index, reason] = await fault();
    expect(index).toBe(5607);
    expect(reason).toMatch(/subtree over records 5600\.\.5607 is missing/);
  });

  it('refuses a checkpoint beyond the log and a bad checkpoint of the empty log', async () => {
    await checkpointedLog();
    db.raw.prepare('DELETE FROM audit_records WHERE idx >= 11000').run();
    expect((await fault())[1]).toMatch(/tree size 12000 is beyond the log's 11000 records/);
    db.raw.prepare('DELETE FROM checkpoints WHERE tree_size = 12000').run();
    expect((await verifyAuditLog(store, 'acme', keyring.jwks())).ok).toBe(true);

    const head = { tenant: 'acme', timestamp: '2026-01-01T00:00:00.000Z', treeSize: 0 };
    await store.saveCheckpoint(signCheckpoint({ ...head, rootHash: Buffer.alloc(32) }, keyring));
    expect((await fault())[1]).toMatch(/empty log has a root other than the empty root/);
    db.raw.prepare('DELETE FROM checkpoints WHERE tree_size = 0').run();
    await store.saveCheckpoint(signCheckpoint({ ...head, rootHash: emptyRoot() }, keyring));
    expect((await verifyAuditLog(store, 'acme', keyring.jwks())).ok).toBe(true);
  });
});
