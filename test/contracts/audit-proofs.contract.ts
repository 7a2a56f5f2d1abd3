import { describe, expect, it } from 'vitest';
import { AuditLog, leafHash, verifyConsistency, verifyInclusion } from '../../src/audit/index.js';
import type { AuditStore, Signer } from '../../src/audit/index.js';
import { ManualClock, isGatehouseError } from '../../src/core/index.js';
import type { AuditRecordDraft } from '../../src/core/index.js';
import { consistencyProof, inclusionProof, rootHash } from '../audit/merkle-reference.js';
import { seededInts } from '../audit/stored-log.js';
import type { MadeAuditStore } from './audit-store.contract.js';

/** One read an {@link AuditLog} asked of the store: its method, and how many rows or subtrees. */
interface StoreRead {
  method: string;
  amount?: number;
}

/** The store, passing every call through and noting each read. */
function counted(store: AuditStore): { store: AuditStore; reads: StoreRead[] } {
  const reads: StoreRead[] = [];
  return {
    reads,
    store: {
      append: (records) => store.append(records),
      size: (tenant) => {
        reads.push({ method: 'size' });
        return store.size(tenant);
      },
      records: (tenant, from, to) => {
        reads.push({ method: 'records', amount: to - from });
        return store.records(tenant, from, to);
      },
      subtreeHashes: (tenant, refs) => {
        reads.push({ method: 'subtreeHashes', amount: refs.length });
        return store.subtreeHashes(tenant, refs);
      },
      tenants: () => {
        reads.push({ method: 'tenants' });
        return store.tenants();
      },
      saveCheckpoint: (cp) => store.saveCheckpoint(cp),
      checkpoints: (tenant, sizes) => {
        reads.push({ method: 'checkpoints' });
        return store.checkpoints(tenant, sizes);
      },
    },
  };
}

/**
 * The contract an {@link AuditStore} keeps with the {@link AuditLog} that serves proofs from it:
 * roots and proofs of any tree size are the RFC 6962 ones recomputed from every leaf, and each
 * costs O(log n) reads, whoever asks and however large the log. Registers a vitest suite named
 * `name`; `make` gives a fresh, empty log for each test.
 */
export function auditProofsContract(name: string, make: () => Promise<MadeAuditStore>): void {
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
    data: { n },
  });
  // Signatures are not what is checked here.
  const signer: Signer = { sign: () => ({ keyid: 'k', sig: Buffer.alloc(64) }) };
  const logOf = (store: AuditStore) => new AuditLog({ store, signer, clock: new ManualClock(0) });
  const leavesOf = async (store: AuditStore, tenant: string): Promise<Buffer[]> =>
    (await store.records(tenant, 0, await store.size(tenant))).map((r) =>
      leafHash(Buffer.from(r.record, 'utf8')),
    );
  const b64 = (h: Buffer): string => h.toString('base64');
  const unb64 = (s: string): Buffer => Buffer.from(s, 'base64');
  const ceilLog2 = (n: number): number => Math.ceil(Math.log2(n));

  describe(`AuditStore proofs contract: ${name}`, () => {
    it('serves the reference proofs at random sizes of a log grown by random appends (seeded)', () =>
      withStore(async ({ store, append }) => {
        const int = seededInts(6962);
        // Batches of 1..40 records, through both append paths, another tenant's in between.
        let n = 0;
        while (n < 600) {
          const drafts = Array.from({ length: int(1, 40) }, () => draft('acme', n++));
          drafts.splice(int(0, drafts.length), 0, draft('globex', n));
          if (int(0, 1) === 0) await store.append(drafts);
          else await append({ audit: drafts, events: [] });
        }
        const leaves = await leavesOf(store, 'acme');
        expect(leaves).toHaveLength(n);
        const log = logOf(store);
        expect((await log.checkpoint('acme')).rootHash).toBe(b64(rootHash(leaves)));
        for (let round = 0; round < 60; round++) {
          const size = int(1, n);
          const index = int(0, size - 1);
          const from = int(1, size);
          const at = `round ${round}: index ${index}, from ${from}, size ${size}`;
          const root = rootHash(leaves, size);
          const a = await log.inclusion('acme', index, size);
          expect([at, a.leafHash, a.rootHash, a.proof]).toEqual([
            at,
            b64(leaves[index] as Buffer),
            b64(root),
            inclusionProof(leaves, index, size).map(b64),
          ]);
          expect(
            verifyInclusion(leaves[index] as Buffer, index, size, a.proof.map(unb64), root),
          ).toBe(true);
          const c = await log.consistency('acme', from, size);
          const fromRoot = rootHash(leaves, from);
          expect([at, c.fromRoot, c.toRoot, c.proof]).toEqual([
            at,
            b64(fromRoot),
            b64(root),
            consistencyProof(leaves, from, size).map(b64),
          ]);
          expect(verifyConsistency(from, size, c.proof.map(unb64), fromRoot, root)).toBe(true);
        }
      }));

    it('answers each proof and checkpoint with O(log n) reads, never a pass over the log', () =>
      withStore(async ({ store }) => {
        for (let n = 0; n < 3000; n += 1000) {
          await store.append(Array.from({ length: 1000 }, (_, i) => draft('acme', n + i)));
        }
        const c = counted(store);
        const log = logOf(c.store);
        const summary = () => c.reads.map((r) => r.method).join(',');
        const bound = (size: number, per: number) => per * ceilLog2(size) + 2;
        for (const [index, size] of [
          [0, 3000],
          [2047, 3000],
          [2999, 3000],
          [1234, 2049],
          [0, 1],
        ] as const) {
          c.reads.length = 0;
          const a = await log.inclusion('acme', index, size);
          expect(summary()).toBe('size,records,subtreeHashes');
          expect(c.reads[1]?.amount).toBe(1); // the proven record, and no other
          expect(c.reads[2]?.amount).toBeLessThanOrEqual(bound(size, 2));
          expect(a.proof.length).toBeLessThanOrEqual(ceilLog2(size));
        }
        for (const [from, to] of [
          [1, 3000],
          [1999, 3000],
          [2048, 2049],
          [3000, 3000],
        ] as const) {
          c.reads.length = 0;
          const p = await log.consistency('acme', from, to);
          expect(summary()).toBe('size,subtreeHashes');
          expect(c.reads[1]?.amount).toBeLessThanOrEqual(bound(to, 3));
          expect(p.proof.length).toBeLessThanOrEqual(ceilLog2(to) + 1);
        }
        c.reads.length = 0;
        await log.checkpoint('acme');
        expect(summary()).toBe('size,subtreeHashes');
        expect(c.reads[1]?.amount).toBeLessThanOrEqual(ceilLog2(3000));
      }));

    it('refuses a malformed or out-of-range request before reading any subtree', () =>
      withStore(async ({ store }) => {
        await store.append(Array.from({ length: 10 }, (_, i) => draft('acme', i)));
        const c = counted(store);
        const log = logOf(c.store);
        const refused = async (request: Promise<unknown>, parameter: string) => {
          c.reads.length = 0;
          const err = await request.then(
            () => null,
            (e: unknown) => e,
          );
          expect(isGatehouseError(err, 'INVALID_INPUT')).toBe(true);
          expect(isGatehouseError(err) && err.details.parameter).toBe(parameter);
          expect(c.reads.every((r) => r.method === 'size')).toBe(true);
        };
        await refused(log.inclusion('acme', -1), 'index');
        await refused(log.inclusion('acme', 0.5), 'index');
        await refused(log.inclusion('acme', 2 ** 53), 'index');
        await refused(log.inclusion('acme', 10), 'index');
        await refused(log.inclusion('acme', 5, 5), 'index');
        await refused(log.inclusion('acme', 0, 0), 'size');
        await refused(log.inclusion('acme', 0, 11), 'size');
        await refused(log.inclusion('acme', 0, Number.NaN), 'size');
        await refused(log.consistency('acme', 0, 5), 'from');
        await refused(log.consistency('acme', 6, 5), 'from');
        await refused(log.consistency('acme', 1, 11), 'to');
        await refused(log.consistency('acme', 1, Number.POSITIVE_INFINITY), 'to');
        await refused(log.inclusion('nobody', 0), 'index');
      }));
  });
}
