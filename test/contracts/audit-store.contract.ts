import { describe, expect, it } from 'vitest';
import { canonicalJson } from '../../src/core/index.js';
import type { AuditPosition, AuditRecordDraft, LedgerEntries } from '../../src/core/index.js';
import { AuditLog, leafHash, verifyConsistency, verifyInclusion } from '../../src/audit/index.js';
import type { AuditStore, Checkpoint, Signer, SubtreeRef } from '../../src/audit/index.js';
import { ManualClock } from '../../src/core/index.js';
import { consistencyProof, inclusionProof, rootHash } from '../audit/merkle-reference.js';

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

  /** The leaf hashes of a tenant's log, from its records' bytes. */
  const leavesOf = async (store: AuditStore, tenant: string): Promise<Buffer[]> =>
    (await store.records(tenant, 0, await store.size(tenant))).map((r) =>
      leafHash(Buffer.from(r.record, 'utf8')),
    );

  /** Every subtree of a log of `size` leaves, complete or not, up to the level of `size`. */
  const subtreesUpTo = (size: number): SubtreeRef[] => {
    const refs: SubtreeRef[] = [];
    for (let level = 0; 2 ** level <= 2 * size; level++) {
      for (let index = 0; index * 2 ** level <= size; index++) refs.push({ level, index });
    }
    return refs;
  };
  const complete = (r: SubtreeRef, size: number) => (r.index + 1) * 2 ** r.level <= size;

  // Signatures are not what the store is checked for.
  const signer: Signer = { sign: () => ({ keyid: 'k', sig: Buffer.alloc(64) }) };

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

    it('keeps the hash of every subtree its appends complete, and none other', () =>
      withStore(async ({ store, append }) => {
        // Appends of every path and size, two tenants interleaved.
        let n = 0;
        for (const count of [1, 3, 7, 2, 1, 9, 5, 4, 5]) {
          const drafts = Array.from({ length: count }, () => draft('acme', n++));
          if (count % 2 === 0) await store.append([...drafts, draft('globex', n)]);
          else await append(entries(...drafts, draft('globex', n)));
        }
        expect(await store.size('acme')).toBe(37);
        for (const tenant of ['acme', 'globex']) {
          const leaves = await leavesOf(store, tenant);
          const refs = subtreesUpTo(leaves.length);
          const hashes = await store.subtreeHashes(tenant, [...refs, ...refs.slice(0, 3)]);
          refs.forEach((r, i) => {
            const first = r.index * 2 ** r.level;
            const expected = complete(r, leaves.length)
              ? rootHash(leaves.slice(first, first + 2 ** r.level))
              : null;
            expect([r, hashes[i]]).toEqual([r, expected]);
          });
          expect(hashes.slice(refs.length)).toEqual(hashes.slice(0, 3));
        }
        expect(await store.subtreeHashes('nobody', [{ level: 0, index: 0 }])).toEqual([null]);
        expect(await store.subtreeHashes('acme', [])).toEqual([]);
      }));

    it('answers a batch of many subtrees as it answers each alone', () =>
      withStore(async ({ store }) => {
        await store.append(Array.from({ length: 300 }, (_, n) => draft('acme', n)));
        // Dense runs of a level (as a verifier asks), one past the end, and scattered ones.
        const refs: SubtreeRef[] = [
          ...Array.from({ length: 151 }, (_, index) => ({ level: 1, index })),
          ...Array.from({ length: 80 }, (_, index) => ({ level: 2, index })),
          { level: 1, index: 0 },
          { level: 3, index: 36 },
          { level: 3, index: 1_000_000 },
          ...Array.from({ length: 70 }, (_, i) => ({ level: 0, index: i * 4 })),
        ];
        const batch = await store.subtreeHashes('acme', refs);
        const alone = await Promise.all(
          refs.map(async (r) => (await store.subtreeHashes('acme', [r]))[0]),
        );
        expect(batch).toEqual(alone);
        expect(batch.filter((h) => h === null)).toHaveLength(1 + 5 + 1);
      }));

    it('appends nothing, not even a subtree, when one record of an append fails', () =>
      withStore(async ({ store }) => {
        await store.append([draft('acme', 0)]);
        const bad = { ...draft('acme', 2), data: { n: Number.NaN } };
        await expect(store.append([draft('acme', 1), bad])).rejects.toThrow();
        expect(await store.size('acme')).toBe(1);
        expect(await store.subtreeHashes('acme', [{ level: 1, index: 0 }])).toEqual([null]);
        await store.append([draft('acme', 1), draft('acme', 2), draft('acme', 3)]);
        const leaves = await leavesOf(store, 'acme');
        expect(await store.subtreeHashes('acme', [{ level: 2, index: 0 }])).toEqual([
          rootHash(leaves),
        ]);
      }));

    it('serves the reference proofs of every earlier tree size from its subtrees', () =>
      withStore(async ({ store }) => {
        const log = new AuditLog({ store, signer, clock: new ManualClock(0) });
        for (let n = 0; n < 21; n++) await store.append([draft('acme', n)]);
        await store.append(Array.from({ length: 16 }, (_, i) => draft('acme', 21 + i)));
        const leaves = await leavesOf(store, 'acme');
        const b64 = (h: Buffer) => h.toString('base64');
        for (let size = 1; size <= leaves.length; size++) {
          const root = rootHash(leaves, size);
          for (let index = 0; index < size; index++) {
            const a = await log.inclusion('acme', index, size);
            expect(a.rootHash).toBe(b64(root));
            expect(a.leafHash).toBe(b64(leaves[index] as Buffer));
            expect(a.proof).toEqual(inclusionProof(leaves, index, size).map(b64));
            const proof = a.proof.map((p) => Buffer.from(p, 'base64'));
            expect(verifyInclusion(leaves[index] as Buffer, index, size, proof, root)).toBe(true);
          }
          for (let from = 1; from <= size; from++) {
            const c = await log.consistency('acme', from, size);
            expect(c.proof).toEqual(consistencyProof(leaves, from, size).map(b64));
            const proof = c.proof.map((p) => Buffer.from(p, 'base64'));
            expect(verifyConsistency(from, size, proof, rootHash(leaves, from), root)).toBe(true);
          }
        }
        expect((await log.checkpoint('acme')).rootHash).toBe(b64(rootHash(leaves)));
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
        expect(await store.checkpoints('acme', { from: 3, to: 12 })).toEqual([
          checkpoint('acme', 3),
        ]);
        expect(await store.checkpoints('acme', { from: 4, to: 13 })).toEqual([
          checkpoint('acme', 12),
        ]);
        expect(await store.checkpoints('acme', { from: 13, to: Number.MAX_SAFE_INTEGER })).toEqual(
          [],
        );
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
