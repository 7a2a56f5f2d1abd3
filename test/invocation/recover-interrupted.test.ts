import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/core/index.js';
import type { SideEffectClass } from '../../src/core/index.js';
import { SigningKeyring } from '../../src/audit/index.js';
import { recoverInterrupted } from '../../src/invocation/index.js';
import { SqliteDatabase } from '../../src/storage/sqlite/sqlite-database.js';
import { SqliteInvocationStore } from '../../src/storage/sqlite/sqlite-invocation-store.js';
import { storeLeftCall } from '../helpers/invocation-records.js';

let dir: string;
let db: SqliteDatabase;
let store: SqliteInvocationStore;
let keyring: SigningKeyring;
const clock = new ManualClock();

beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), 'gatehouse-recover-'));
  db = await SqliteDatabase.open({ file: join(dir, 'g.db') });
  store = new SqliteInvocationStore(db);
  keyring = await SigningKeyring.open(join(dir, 'keys'), clock);
});

afterEach(async () => {
  await db.close();
  rmSync(dir, { recursive: true, force: true });
});

const at = '2026-01-01T00:00:00.000Z';

/** Stores a call as a stopped gateway left it. */
function left(
  n: number,
  status: 'running' | 'queued',
  effectiveClass: SideEffectClass,
): Promise<string> {
  return storeLeftCall(store, n, status, effectiveClass, { at });
}

/** The stored outcome: status, error and the stage entry recovery added. */
async function outcome(id: string) {
  const r = (await store.get('acme', id))!;
  const { stage, decision } = r.trace[0]!;
  return { status: r.status, error: r.error, stage, decision };
}

describe('recoverInterrupted', () => {
  it('settles a write left running as uncertain, saying its effect may have happened', async () => {
    const id = await left(1, 'running', 'shared-write');
    await recoverInterrupted({ store, signer: keyring, clock });
    const message =
      'Gatehouse stopped while this call was running; its effect may have happened and was not confirmed';
    expect(await outcome(id)).toEqual({
      status: 'uncertain',
      error: { code: 'GATEWAY_RESTARTED', message, stage: 'execute' },
      stage: 'execute',
      decision: 'uncertain',
    });
    expect(await store.receipt('acme', id)).toBeDefined();
  });

  it('settles a read left running as failed: the one rule says a read changed nothing', async () => {
    const id = await left(2, 'running', 'read');
    await recoverInterrupted({ store, signer: keyring, clock });
    expect(await outcome(id)).toEqual({
      status: 'failed',
      error: {
        code: 'GATEWAY_RESTARTED',
        message: 'Gatehouse stopped while this call was running',
        stage: 'execute',
      },
      stage: 'execute',
      decision: 'fail',
    });
  });

  it('settles a write left queued as failed and retryable: nothing ran', async () => {
    const id = await left(3, 'queued', 'production');
    const settled = await recoverInterrupted({ store, signer: keyring, clock });
    expect(settled.map((r) => r.id)).toEqual([id]);
    expect(await outcome(id)).toEqual({
      status: 'failed',
      error: {
        code: 'QUEUE_INTERRUPTED',
        message:
          'Gatehouse stopped while this call waited for capacity; nothing ran — retry it with the same key',
        stage: 'sandbox',
      },
      stage: 'sandbox',
      decision: 'fail',
    });
    expect(await store.receipt('acme', id)).toBeDefined();
  });
});
