import { describe, expect, it } from 'vitest';
import { canonicalJson } from '../../src/core/index.js';
import type { AuditPosition, AuditRecordDraft, LedgerEntries } from '../../src/core/index.js';
import { leafHash } from '../../src/audit/index.js';
import type { AuditStore, Checkpoint } from '../../src/audit/index.js';

/** What an {@link auditStoreContract} test gets. */
export interface MadeAuditStore {
  store: AuditStore;
  /**
   * Appends entries to the log the way the other stores do (the store itself only reads records),
   * in one transaction; the position of each audit record.
   */
  append: (entries: LedgerEntries) => Promise<AuditPosition[]>;
  close(): Promise<void>;
}

/**
 * The contract every {@link AuditStore} keeps. Registers a vitest suite named `name`; `make` gives
 * a fresh, empty log for each test.
 */
export function auditStoreContract(name: string, make: () => Promise<MadeAuditStore>): void {
  async function withStore(body: (made: MadeAuditStore) => Promise<void>): Promise<void> {
    const made = await make();
    try {
      await body(made);
    } finally {
      await made.close();
    }
  }

  const draft = (tenant: string, n: number): AuditRecordDraft => ({
    tenant,
    type: 'invocation.observed',
    subject: `invocation/${n}`,
    at: '2026-01-01T00:00:00.000Z',
    actor: 'p-1',
    data: { n, text: 'ünïcode «»', nested: { b: 1, a: [true, null] } },
  });
  const entries = (...drafts: AuditRecordDraft[]): LedgerEntries => ({ audit: drafts, events: [] });

  const checkpoint = (tenant: string, treeSize: number): Checkpoint => ({
    tenant,
    treeSize,
    rootHash: Buffer.alloc(32, treeSize).toString('base64'),
    timestamp: `2026-01-01T00:00:0${treeSize % 10}.000Z`,
    keyid: 'key-1',
    signature: Buffer.alloc(64, 7).toString('base64'),
  });

  describe(`AuditStore contract: ${name}`, () => {
    it('has no records and no tenants when empty', () =>
      withStore(async ({ store }) => {
        expect(await store.size('acme')).toBe(0);
        expect(await store.records('acme', 0, 10)).toEqual([]);
        expect(await store.tenants()).toEqual([]);
        expect(await store.checkpoints('acme')).toEqual([]);
      }));

    it('counts and returns each tenant records in order, as canonical JSON with leaf hashes', () =>
      withStore(async ({ store, append }) => {
        await append(entries(draft('acme', 0), draft('globex', 0), draft('acme', 1)));
        await append(entries(draft('acme', 2)));
        expect(await store.size('acme')).toBe(3);
        expect(await store.size('globex')).toBe(1);
        const records = await store.records('acme', 0, 3);
        expect(records.map((r) => [r.tenant, r.index])).toEqual([
          ['acme', 0],
          ['acme', 1],
          ['acme', 2],
        ]);
        records.forEach((r, i) => {
          expect(r.record).toBe(canonicalJson({ ...draft('acme', i), index: i }));
          expect(r.leafHash).toBe(leafHash(Buffer.from(r.record, 'utf8')).toString('base64'));
        });
        const [theirs] = await store.records('globex', 0, 1);
        expect(JSON.parse(theirs!.record)).toEqual({ ...draft('globex', 0), index: 0 });
      }));

    it('appends records of its own after those of other changes, at the next indices', () =>
      withStore(async ({ store, append }) => {
        await append(entries(draft('acme', 0)));
        await store.append([draft('acme', 1), draft('globex', 0)]);
        await store.append([]);
        await append(entries(draft('acme', 2)));
        const records = await store.records('acme', 0, 10);
        expect(records.map((r) => JSON.parse(r.record) as unknown)).toEqual(
          [0, 1, 2].map((n) => ({ ...draft('acme', n), index: n })),
        );
        expect(await store.size('globex')).toBe(1);
      }));

    it('returns the half-open range asked for', () =>
      withStore(async ({ store, append }) => {
        await append(entries(...[0, 1, 2, 3, 4].map((n) => draft('acme', n))));
        const indices = async (from: number, to: number) =>
          (await store.records('acme', from, to)).map((r) => r.index);
        expect(await indices(1, 3)).toEqual([1, 2]);
        expect(await indices(4, 5)).toEqual([4]);
        expect(await indices(3, 3)).toEqual([]);
        expect(await indices(3, 100)).toEqual([3, 4]);
        expect(await indices(5, 10)).toEqual([]);
      }));

    it('lists the tenants that have records, sorted', () =>
      withStore(async ({ store, append }) => {
        await append(entries(draft('zeta', 0), draft('acme', 0), draft('zeta', 1)));
        await append(entries(draft('globex', 0)));
        expect(await store.tenants()).toEqual(['acme', 'globex', 'zeta']);
      }));

    it('stores checkpoints per tenant, listed by tree size', () =>
      withStore(async ({ store }) => {
        await store.saveCheckpoint(checkpoint('acme', 12));
        await store.saveCheckpoint(checkpoint('acme', 3));
        await store.saveCheckpoint(checkpoint('globex', 5));
        expect(await store.checkpoints('acme')).toEqual([
          checkpoint('acme', 3),
          checkpoint('acme', 12),
        ]);
        expect(await store.checkpoints('globex')).toEqual([checkpoint('globex', 5)]);
      }));

    it('is safe to save the same checkpoint again', () =>
      withStore(async ({ store }) => {
        await store.saveCheckpoint(checkpoint('acme', 3));
        await store.saveCheckpoint(checkpoint('acme', 3));
        await Promise.all([
          store.saveCheckpoint(checkpoint('acme', 3)),
          store.saveCheckpoint(checkpoint('acme', 3)),
        ]);
        expect(await store.checkpoints('acme')).toEqual([checkpoint('acme', 3)]);
      }));
  });
}
