import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ExecutionCapacity } from '../../src/capacity/index.js';
import { ManualClock, SequentialIds } from '../../src/core/index.js';
import { EgressProxy } from '../../src/egress/index.js';
import { SandboxLeases } from '../../src/invocation/index.js';
import type { LeaseAsk } from '../../src/invocation/index.js';
import { CredentialBroker, SecretCipher, SecretService } from '../../src/secrets/index.js';
import type { CredentialNeed } from '../../src/secrets/index.js';
import { Workspaces } from '../../src/sandbox/index.js';
import { SqliteDatabase } from '../../src/storage/sqlite/sqlite-database.js';
import { SqliteSecretStore } from '../../src/storage/sqlite/sqlite-secret-store.js';
import { getThrough, startOrigin } from '../egress/fixtures.js';
import { MemoryLeaseStore } from '../helpers/memory-lease-store.js';

const KEY = 'brokered-key-5c1e9a';

let root: string;
let db: SqliteDatabase;
let a: Awaited<ReturnType<typeof startOrigin>>;
let b: Awaited<ReturnType<typeof startOrigin>>;

beforeAll(async () => {
  root = mkdtempSync(join(tmpdir(), 'gatehouse-lease-cred-'));
  db = await SqliteDatabase.open({ file: join(root, 'g.db') });
  a = await startOrigin();
  b = await startOrigin();
});
afterAll(async () => {
  await a.close();
  await b.close();
  await db.close();
  rmSync(root, { recursive: true, force: true });
});

/**
 * Issues `needs` with the real broker, holds a lease whose egress proxy allows both loopback
 * servers, and sends one plain-HTTP GET through it to each; returns the headers each server saw.
 */
async function sendToBoth(invocationId: string, needs: CredentialNeed[]) {
  const clock = new ManualClock();
  const store = new SqliteSecretStore(db);
  const cipher = SecretCipher.fromKey(randomBytes(32));
  await new SecretService({ store, cipher, clock }).put('acme', 'api-key', KEY, ['api'], 'admin');
  const broker = new CredentialBroker({ store, cipher, clock, ids: new SequentialIds('cl') });
  const issued = await broker.issue('acme', invocationId, needs, 30_000);
  const egress = new EgressProxy({ dir: join(root, `sockets-${invocationId}`) });
  const leases = new SandboxLeases({
    capacity: await ExecutionCapacity.open({
      store: new MemoryLeaseStore(),
      clock,
      ids: new SequentialIds('lease'),
      pools: [{ name: 'default', cpus: 2, memoryBytes: 2 ** 30, gpus: 0, leases: 4 }],
    }),
    workspaces: new Workspaces({ root: join(root, `ws-${invocationId}`), repositories: {} }),
    egress,
    defaults: {
      pool: 'default',
      resources: { cpus: 1, memoryBytes: 2 ** 20, gpus: 0, pids: 16 },
      egressAllow: [`127.0.0.1:${a.port}`, `127.0.0.1:${b.port}`],
      queueBudgetMs: 0,
      attemptTtlMs: 60_000,
      idleAttemptsPerAgent: 1,
    },
  });
  const ask: LeaseAsk = {
    tenant: 'acme',
    agent: 'coder',
    invocationId,
    runId: null,
    attemptId: null,
    needs: {},
    timeoutMs: 5_000,
    credentials: { ...issued, leases: [] },
    signal: new AbortController().signal,
    onQueued: () => Promise.resolve(),
    onEgress: () => undefined,
  };
  const held = await leases.hold(ask);
  try {
    const socket = held.execution.egressSocket!;
    const seenA = a.seen.length;
    const seenB = b.seen.length;
    const toA = await getThrough(socket, `http://127.0.0.1:${a.port}/`);
    const toB = await getThrough(socket, `http://127.0.0.1:${b.port}/`);
    expect([toA.status, toB.status]).toEqual([200, 200]);
    return { a: a.seen[seenA]!.headers, b: b.seen[seenB]!.headers };
  } finally {
    await held.done();
    await egress.close();
  }
}

describe('brokered headers through a lease’s egress proxy', () => {
  it('go only to the exact origin they are bound to, not to another port of the same host', async () => {
    const seen = await sendToBoth('inv-origin', [
      {
        ref: 'api-key',
        scope: 'api',
        inject: { header: 'X-Api-Key', origin: `http://127.0.0.1:${a.port}` },
      },
    ]);
    expect(seen.a['x-api-key']).toBe(KEY);
    expect(seen.b['x-api-key']).toBeUndefined();
  });

  it('bound by a host alone go to https on 443 only: never in cleartext to any port of it', async () => {
    const seen = await sendToBoth('inv-host', [
      { ref: 'api-key', scope: 'api', inject: { header: 'X-Api-Key', host: '127.0.0.1' } },
    ]);
    expect(seen.a['x-api-key']).toBeUndefined();
    expect(seen.b['x-api-key']).toBeUndefined();
  });

  it('bound to no origin go nowhere (publication refuses them; one published before is inert)', async () => {
    const seen = await sendToBoth('inv-any', [
      { ref: 'api-key', scope: 'api', inject: { header: 'X-Api-Key' } },
    ]);
    expect([seen.a['x-api-key'], seen.b['x-api-key']]).toEqual([undefined, undefined]);
  });
});
