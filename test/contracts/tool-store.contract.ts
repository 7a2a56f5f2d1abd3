import { describe, expect, it } from 'vitest';
import type { LedgerEntries } from '../../src/core/index.js';
import type { AuditStore } from '../../src/audit/index.js';
import type {
  AppliedEvent,
  StoredAgentRelease,
  StoredDescriptor,
  ToolStore,
} from '../../src/tools/index.js';

/** What a {@link toolStoreContract} test gets: the store, the audit log it writes to, a closer. */
export interface MadeToolStore {
  store: ToolStore;
  /** The audit log `apply` appends to (the same database). */
  audit: AuditStore;
  close(): Promise<void>;
}

/**
 * The contract every {@link ToolStore} keeps. Registers a vitest suite named `name`; `make` gives
 * a fresh, empty store for each test.
 */
export function toolStoreContract(name: string, make: () => Promise<MadeToolStore>): void {
  async function withStore(body: (made: MadeToolStore) => Promise<void>): Promise<void> {
    const made = await make();
    try {
      await body(made);
    } finally {
      await made.close();
    }
  }

  const at = (s: number) => new Date(Date.UTC(2026, 0, 1, 0, 0, s)).toISOString();

  const event = (over: Partial<AppliedEvent> = {}): AppliedEvent => ({
    tenant: 'acme',
    eventId: 'ev-1',
    type: 'AssetReleasePublished',
    asset: 'tool/demo.echo',
    sequence: null,
    digest: 'd'.repeat(64),
    appliedAt: at(0),
    ...over,
  });

  const descriptor = (over: Partial<StoredDescriptor> = {}): StoredDescriptor => ({
    tenant: 'acme',
    descriptor: {
      id: 'demo.echo',
      version: '1.0.0',
      kind: 'native',
      description: 'Echoes its input — «ünïcode» kept',
      inputSchema: { type: 'object', properties: { text: { type: 'string' } } },
      sideEffect: {
        class: 'read',
        rules: [{ pointer: '/text', equals: 'x', raiseTo: 'production' }],
      },
      execution: { handler: 'demo.echo' },
    },
    digest: 'a'.repeat(64),
    state: 'active',
    inFlightPolicy: 'abort',
    stateReason: null,
    publishedAt: at(0),
    updatedAt: at(0),
    ...over,
  });

  const release = (over: Partial<StoredAgentRelease> = {}): StoredAgentRelease => ({
    tenant: 'acme',
    release: {
      agentId: 'coder',
      version: '2.0.0',
      closure: [{ id: 'demo.echo', version: '1.0.0' }],
      policy: { maxClass: 'workspace-write' },
    },
    digest: 'b'.repeat(64),
    publishedAt: at(1),
    ...over,
  });

  const ledger = (tenant: string, type: string, n = 1): LedgerEntries => ({
    audit: Array.from({ length: n }, (_, i) => ({
      tenant,
      type,
      subject: `tool/demo.echo@1.0.0#${i}`,
      at: at(0),
      actor: 'publisher',
      data: { i },
    })),
    events: [],
  });

  describe(`ToolStore contract: ${name}`, () => {
    it('starts empty', () =>
      withStore(async ({ store }) => {
        expect(await store.loadAll()).toEqual({ descriptors: [], agentReleases: [] });
        expect(await store.findEvent('acme', 'ev-1')).toBeUndefined();
        expect(await store.lastSequence('acme', 'tool/demo.echo')).toBeUndefined();
      }));

    it('gives back the descriptor, release and event it applied', () =>
      withStore(async ({ store }) => {
        const d = descriptor();
        const e1 = event({ sequence: 7 });
        await store.apply({ event: e1, descriptor: d, ledger: ledger('acme', 'x') });
        const r = release();
        const e2 = event({ eventId: 'ev-2', type: 'AgentReleasePublished', asset: 'agent/coder' });
        await store.apply({ event: e2, agentRelease: r, ledger: ledger('acme', 'x') });
        expect(await store.loadAll()).toEqual({ descriptors: [d], agentReleases: [r] });
        expect(await store.findEvent('acme', 'ev-1')).toEqual(e1);
        expect(await store.findEvent('acme', 'ev-2')).toEqual(e2);
      }));

    it('updates the state of a stored version', () =>
      withStore(async ({ store }) => {
        const d = descriptor();
        await store.apply({ event: event(), descriptor: d, ledger: ledger('acme', 'x') });
        const revoked: StoredDescriptor = {
          ...d,
          state: 'revoked',
          stateReason: 'CVE-2026-1',
          updatedAt: at(5),
        };
        await store.apply({
          event: event({ eventId: 'ev-2', type: 'AssetReleaseRevoked' }),
          descriptor: revoked,
          ledger: ledger('acme', 'x'),
        });
        const { descriptors } = await store.loadAll();
        expect(descriptors).toEqual([revoked]);
      }));

    it('lists descriptors in publication order', () =>
      withStore(async ({ store }) => {
        const later = descriptor({ publishedAt: at(9), updatedAt: at(9) });
        const earlier = descriptor({
          descriptor: { ...descriptor().descriptor, version: '2.0.0' },
          publishedAt: at(3),
          updatedAt: at(3),
        });
        await store.apply({ event: event(), descriptor: later, ledger: ledger('acme', 'x') });
        await store.apply({
          event: event({ eventId: 'ev-2' }),
          descriptor: earlier,
          ledger: ledger('acme', 'x'),
        });
        const { descriptors } = await store.loadAll();
        expect(descriptors.map((d) => d.descriptor.version)).toEqual(['2.0.0', '1.0.0']);
      }));

    it('refuses an event id applied before, writing nothing of the change', () =>
      withStore(async ({ store, audit }) => {
        await store.apply({
          event: event(),
          descriptor: descriptor(),
          ledger: ledger('acme', 'x'),
        });
        const other = descriptor({ descriptor: { ...descriptor().descriptor, version: '9.9.9' } });
        await expect(
          store.apply({ event: event(), descriptor: other, ledger: ledger('acme', 'y', 2) }),
        ).rejects.toThrow();
        const { descriptors } = await store.loadAll();
        expect(descriptors.map((d) => d.descriptor.version)).toEqual(['1.0.0']);
        expect(await audit.size('acme')).toBe(1);
      }));

    it('keeps event ids per tenant', () =>
      withStore(async ({ store }) => {
        await store.apply({ event: event(), ledger: ledger('acme', 'x') });
        expect(await store.findEvent('globex', 'ev-1')).toBeUndefined();
        const theirs = event({ tenant: 'globex', digest: 'e'.repeat(64) });
        await store.apply({ event: theirs, ledger: ledger('globex', 'x') });
        expect(await store.findEvent('globex', 'ev-1')).toEqual(theirs);
        expect((await store.findEvent('acme', 'ev-1'))?.digest).toBe('d'.repeat(64));
      }));

    it('gives the highest sequence of an asset in a tenant', () =>
      withStore(async ({ store }) => {
        const apply = (eventId: string, over: Partial<AppliedEvent>) =>
          store.apply({ event: event({ eventId, ...over }), ledger: ledger('acme', 'x') });
        await apply('a', { sequence: 3 });
        await apply('b', { sequence: 11 });
        await apply('c', { sequence: null });
        await apply('d', { sequence: 5 });
        await apply('e', { sequence: 40, asset: 'tool/other' });
        await store.apply({
          event: event({ tenant: 'globex', eventId: 'f', sequence: 99 }),
          ledger: ledger('globex', 'x'),
        });
        expect(await store.lastSequence('acme', 'tool/demo.echo')).toBe(11);
        expect(await store.lastSequence('acme', 'tool/other')).toBe(40);
        expect(await store.lastSequence('globex', 'tool/demo.echo')).toBe(99);
        expect(await store.lastSequence('acme', 'agent/coder')).toBeUndefined();
      }));

    it('appends the ledger to the audit log of each tenant', () =>
      withStore(async ({ store, audit }) => {
        await store.apply({
          event: event(),
          descriptor: descriptor(),
          ledger: ledger('acme', 'descriptor.activated', 2),
        });
        await store.apply({ event: event({ eventId: 'ev-2' }), ledger: ledger('acme', 'z') });
        expect(await audit.size('acme')).toBe(3);
        expect(await audit.size('globex')).toBe(0);
        const records = await audit.records('acme', 0, 3);
        expect(records.map((r) => (JSON.parse(r.record) as { type: string }).type)).toEqual([
          'descriptor.activated',
          'descriptor.activated',
          'z',
        ]);
      }));
  });
}
