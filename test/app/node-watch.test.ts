import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { NodeWatch } from '../../src/app/node-watch.js';
import type { AuditStore } from '../../src/audit/index.js';
import { SigningKeyring } from '../../src/audit/index.js';
import type { Lease, LeaseStore, NodeStore } from '../../src/capacity/index.js';
import { ManualClock, isoTime } from '../../src/core/index.js';
import type { SideEffectClass } from '../../src/core/index.js';
import type { InvocationStore } from '../../src/invocation/index.js';
import {
  PostgresAuditStore,
  PostgresDatabase,
  PostgresInvocationStore,
  PostgresLeaseStore,
  PostgresNodeStore,
  SqliteAuditStore,
  SqliteDatabase,
  SqliteInvocationStore,
  SqliteLeaseStore,
  SqliteNodeStore,
} from '../../src/storage/index.js';
import { storeLeftCall } from '../helpers/invocation-records.js';
import { migratedPostgresDatabase, missingPostgres } from '../helpers/postgres.js';
import { skipWithout } from '../helpers/prerequisites.js';

/** The stores a node uses, on one database. */
interface Stores {
  nodes: NodeStore;
  invocations: InvocationStore;
  leases: LeaseStore;
  audit: AuditStore;
}

/** One gateway node's stores: its own connections where the backend has them. */
type OpenNode = () => Promise<Stores>;

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

async function sqliteBackend(): Promise<OpenNode> {
  const dir = mkdtempSync(join(tmpdir(), 'gatehouse-nodes-'));
  const db = await SqliteDatabase.open({ file: join(dir, 'g.db') });
  cleanups.push(
    () => rmSync(dir, { recursive: true, force: true }),
    () => db.close(),
  );
  // One process holds a SQLite file: every "node" here shares its connection.
  return () =>
    Promise.resolve({
      nodes: new SqliteNodeStore(db),
      invocations: new SqliteInvocationStore(db),
      leases: new SqliteLeaseStore(db),
      audit: new SqliteAuditStore(db),
    });
}

async function postgresBackend(): Promise<OpenNode> {
  const url = await migratedPostgresDatabase('nodes');
  return async () => {
    const db = await PostgresDatabase.open({ url, poolSize: 2 });
    cleanups.push(() => db.close());
    return {
      nodes: new PostgresNodeStore(db),
      invocations: new PostgresInvocationStore(db),
      leases: new PostgresLeaseStore(db),
      audit: new PostgresAuditStore(db),
    };
  };
}

const clock = new ManualClock();
const config = { heartbeatMs: 1_000, graceMs: 3_000 };
const silent = { warn: () => undefined, error: () => undefined };

async function keyring(): Promise<SigningKeyring> {
  const dir = mkdtempSync(join(tmpdir(), 'gatehouse-nodes-keys-'));
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  return SigningKeyring.open(join(dir, 'keys'), clock);
}

/** A call stored by `node` as that node left it. */
function left(
  s: Stores,
  n: number,
  node: string,
  status: 'running' | 'queued' | 'observed',
  effectiveClass: SideEffectClass,
): Promise<string> {
  return storeLeftCall(s.invocations, n, status, effectiveClass, {
    at: isoTime(clock.now()),
    node,
  });
}

function lease(n: number, node: string): Lease {
  return {
    id: `0290000${String(n).padStart(5, '0')}`,
    tenant: 'acme',
    pool: 'default',
    holder: `invocation/i-${n}`,
    agent: 'p-1',
    node,
    status: 'active',
    resources: { cpus: 1, memoryBytes: 1024, gpus: 0, pids: 64 },
    timeoutMs: 1000,
    readOnlyMounts: [],
    egressAllow: [],
    credentials: [],
    worktree: null,
    createdAt: isoTime(clock.now()),
    expiresAt: isoTime(clock.now() + 3_600_000),
    releasedAt: null,
    endReason: null,
  };
}

async function watch(s: Stores, id: string): Promise<NodeWatch> {
  const w = await NodeWatch.register({
    id,
    ...s,
    signer: await keyring(),
    clock,
    config,
    log: silent,
  });
  cleanups.push(() => w.close());
  return w;
}

const noPostgres = skipWithout('PostgreSQL', missingPostgres());
const backends: [string, () => Promise<OpenNode>][] = [
  ['SQLite', sqliteBackend],
  ['PostgreSQL', postgresBackend],
];

describe.each(backends)('NodeWatch on %s', (name, backend) => {
  it.skipIf(noPostgres && name === 'PostgreSQL')(
    'takes over a node silent past the grace period once, settling its calls and reaping its leases with audit records',
    async () => {
      const open = await backend();
      const [a, b, c] = [await open(), await open(), await open()];
      const dead = await watch(a, 'node-dead');
      const write = await left(a, 1, 'node-dead', 'running', 'shared-write');
      const read = await left(a, 2, 'node-dead', 'running', 'read');
      const queued = await left(a, 3, 'node-dead', 'queued', 'production');
      const done = await left(a, 4, 'node-dead', 'observed', 'shared-write');
      await a.leases.insert(lease(1, 'node-dead'), { audit: [], events: [] });
      await a.leases.insert(lease(2, 'node-live-b'), { audit: [], events: [] });
      // Dies: no close, no more heartbeats.
      void dead;
      const wb = await watch(b, 'node-live-b');
      const wc = await watch(c, 'node-live-c');
      const ownCall = await left(b, 5, 'node-live-b', 'running', 'shared-write');

      // Within the grace period nothing is taken over.
      clock.advance(2_000);
      expect(await Promise.all([wb.tick(), wc.tick()])).toEqual([[], []]);
      expect((await a.nodes.get('node-dead'))?.status).toBe('alive');

      // Past it, both survivors tick at once: one takes it over.
      clock.advance(2_000);
      const takeovers = (await Promise.all([wb.tick(), wc.tick()])).flat();
      expect(takeovers).toHaveLength(1);
      const t = takeovers[0]!;
      expect(t.node.id).toBe('node-dead');
      expect(t.settled.map((r) => r.id).sort()).toEqual([write, read, queued].sort());
      expect(t.leases).toEqual([lease(1, 'node-dead').id]);
      const by = (await a.nodes.get('node-dead'))?.claimedBy;
      expect(['node-live-b', 'node-live-c']).toContain(by);

      const stored = async (id: string) => (await a.invocations.get('acme', id))!;
      const w = await stored(write);
      expect(w.status).toBe('uncertain');
      expect(w.error).toEqual({
        code: 'NODE_LOST',
        message:
          'The gateway node node-dead stopped heartbeating while this call was running; its effect may have happened and was not confirmed',
        stage: 'execute',
      });
      expect(w.trace.at(-1)?.reason).toContain(`by node ${by}, which took over node node-dead`);
      expect(await a.invocations.receipt('acme', write)).toBeDefined();
      expect((await stored(read)).status).toBe('failed');
      expect((await stored(read)).error?.code).toBe('NODE_LOST');
      expect((await stored(queued)).error?.code).toBe('QUEUE_INTERRUPTED');
      expect((await stored(done)).status).toBe('observed');
      // A live node's calls and leases are not touched.
      expect((await stored(ownCall)).status).toBe('running');
      expect((await a.leases.active()).map((l) => l.id)).toEqual([lease(2, 'node-live-b').id]);

      // Each change has its audit record: three settled calls, one reaped lease, once each.
      const size = await a.audit.size('acme');
      const types = (await a.audit.records('acme', 0, size)).map(
        (r) => (JSON.parse(r.record) as { type: string }).type,
      );
      expect(types.filter((x) => x === 'invocation.uncertain')).toHaveLength(1);
      expect(types.filter((x) => x === 'invocation.failed')).toHaveLength(2);
      expect(types.filter((x) => x === 'lease.reaped')).toHaveLength(1);

      // Later ticks find nothing more to do.
      clock.advance(1_000);
      expect((await Promise.all([wb.tick(), wc.tick()])).flat()).toEqual([]);
      expect(await a.audit.size('acme')).toBe(size);
    },
  );

  it.skipIf(noPostgres && name === 'PostgreSQL')(
    'keeps a live node alive by its heartbeat, and a clean shutdown is not taken over',
    async () => {
      const open = await backend();
      const [a, b] = [await open(), await open()];
      const wa = await watch(a, 'node-a');
      const wb = await watch(b, 'node-b');
      for (let i = 0; i < 5; i++) {
        clock.advance(1_000);
        await wa.tick();
        expect(await wb.tick()).toEqual([]);
      }
      expect((await a.nodes.get('node-a'))?.status).toBe('alive');
      await left(a, 1, 'node-a', 'running', 'shared-write');
      await wa.close();
      expect((await a.nodes.get('node-a'))?.status).toBe('stopped');
      clock.advance(10_000);
      expect(await wb.tick()).toEqual([]);
      expect((await a.nodes.get('node-a'))?.status).toBe('stopped');
    },
  );
});
