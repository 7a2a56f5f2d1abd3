import { describe, expect, it } from 'vitest';
import {
  MerkleFrontier,
  appendSiblings,
  completedSubtrees,
  emptyRoot,
  leafHash,
  proveConsistency,
  proveInclusion,
  rangeSubtrees,
  treeRoot,
  verifyConsistency,
  verifyInclusion,
} from '../../src/audit/index.js';
import type { SubtreeRef, SubtreeSource } from '../../src/audit/index.js';
import { IllegalStateError, isGatehouseError } from '../../src/core/index.js';
import { consistencyProof, inclusionProof, rootHash } from './merkle-reference.js';
import { lastLeaf, seededInts, storedLog } from './stored-log.js';

const N = 72;

const hex = (h: Buffer): string => h.toString('hex');

function randomLeaves(n: number): Buffer[] {
  return Array.from({ length: n }, (_, i) => leafHash(Buffer.from(`leaf-${i}-${Math.random()}`)));
}

describe('proofs from stored subtrees', () => {
  // One log of N leaves; every smaller size is a historical tree of it, proven from its subtrees.
  const leaves = randomLeaves(N);
  const log = storedLog(leaves);
  const roots = Array.from({ length: N + 1 }, (_, n) => rootHash(leaves, n));

  it('give the reference root of every size, reading only subtrees within it', async () => {
    expect(await treeRoot(log.source, 0)).toEqual(emptyRoot());
    for (let size = 1; size <= N; size++) {
      log.reads.length = 0;
      expect(await treeRoot(log.source, size)).toEqual(roots[size]);
      const read = log.reads.flat();
      expect(read.length).toBeLessThanOrEqual(Math.ceil(Math.log2(size)) + 1);
      expect(read.every((r) => lastLeaf(r) < size)).toBe(true);
    }
  });

  it('give the reference inclusion proof for every index and size, and it verifies', async () => {
    for (let size = 1; size <= N; size++) {
      const root = roots[size];
      for (let index = 0; index < size; index++) {
        log.reads.length = 0;
        const p = await proveInclusion(log.source, index, size);
        // Compared as hex: deep equality of Buffers costs far more than the proofs.
        expect(p.proof.map(hex)).toEqual(inclusionProof(leaves, index, size).map(hex));
        expect(hex(p.rootHash)).toBe(hex(root as Buffer));
        expect(verifyInclusion(leaves[index] as Buffer, index, size, p.proof, p.rootHash)).toBe(
          true,
        );
        // One batch, each subtree once, none beyond the tree of this size.
        expect(log.reads).toHaveLength(1);
        const read = log.reads[0] as SubtreeRef[];
        expect(new Set(read.map((r) => `${r.level}/${r.index}`)).size).toBe(read.length);
        expect(read.length).toBeLessThanOrEqual(2 * Math.ceil(Math.log2(size)) + 1);
        expect(read.every((r) => lastLeaf(r) < size)).toBe(true);
      }
    }
  });

  it('give the reference consistency proof for every pair of sizes, and it verifies', async () => {
    for (let to = 1; to <= N; to++) {
      for (let from = 1; from <= to; from++) {
        log.reads.length = 0;
        const p = await proveConsistency(log.source, from, to);
        expect(p.proof.map(hex)).toEqual(consistencyProof(leaves, from, to).map(hex));
        expect(hex(p.fromRoot)).toBe(hex(roots[from] as Buffer));
        expect(hex(p.toRoot)).toBe(hex(roots[to] as Buffer));
        expect(verifyConsistency(from, to, p.proof, p.fromRoot, p.toRoot)).toBe(true);
        const read = log.reads.flat();
        expect(read.length).toBeLessThanOrEqual(3 * Math.ceil(Math.log2(to)) + 2);
        expect(read.every((r) => lastLeaf(r) < to)).toBe(true);
      }
    }
  });

  it('agree with the reference at random sizes up to 3,000 (seeded, replayable)', async () => {
    // Sizes well past the exhaustive ones above, where paths cross up to 12 levels.
    const big = randomLeaves(3000);
    const bigLog = storedLog(big);
    const ceilLog2 = (n: number) => Math.ceil(Math.log2(n));
    for (const seed of [1, 2, 3]) {
      const int = seededInts(seed);
      for (let round = 0; round < 20; round++) {
        const size = int(1, big.length);
        const index = int(0, size - 1);
        const from = int(1, size);
        const at = `seed ${seed}, round ${round}: index ${index}, from ${from}, size ${size}`;
        const root = rootHash(big, size);
        const p = await proveInclusion(bigLog.source, index, size);
        expect([at, p.proof.map(hex)]).toEqual([at, inclusionProof(big, index, size).map(hex)]);
        expect([at, hex(p.rootHash)]).toEqual([at, hex(root)]);
        expect(p.proof.length).toBeLessThanOrEqual(ceilLog2(size));
        expect(verifyInclusion(big[index] as Buffer, index, size, p.proof, root)).toBe(true);
        const c = await proveConsistency(bigLog.source, from, size);
        expect([at, c.proof.map(hex)]).toEqual([at, consistencyProof(big, from, size).map(hex)]);
        expect([at, hex(c.fromRoot), hex(c.toRoot)]).toEqual([
          at,
          hex(rootHash(big, from)),
          hex(root),
        ]);
        expect(c.proof.length).toBeLessThanOrEqual(ceilLog2(size) + 1);
        expect(verifyConsistency(from, size, c.proof, c.fromRoot, root)).toBe(true);
      }
    }
  });

  it('read O(log n) subtrees at any size, however large', async () => {
    // Hashes that are not a real tree: only what is read, and how much, is checked.
    const reads: SubtreeRef[] = [];
    const source: SubtreeSource = (refs) => {
      reads.push(...refs);
      return Promise.resolve(refs.map(() => Buffer.alloc(32, 7)));
    };
    for (const size of [2 ** 40 + 12_345, 2 ** 52 - 1, 1_000_000]) {
      reads.length = 0;
      const p = await proveInclusion(source, size - 2, size);
      expect(p.proof.length).toBeLessThanOrEqual(Math.ceil(Math.log2(size)));
      expect(reads.length).toBeLessThanOrEqual(2 * Math.ceil(Math.log2(size)) + 1);
      reads.length = 0;
      await proveConsistency(source, Math.floor(size / 3), size);
      expect(reads.length).toBeLessThanOrEqual(3 * Math.ceil(Math.log2(size)) + 2);
      expect(reads.every((r) => lastLeaf(r) < size)).toBe(true);
    }
  });

  it('refuse impossible requests with INVALID_INPUT', async () => {
    const invalid = async (p: Promise<unknown>) =>
      p.then(
        () => false,
        (err: unknown) => isGatehouseError(err, 'INVALID_INPUT'),
      );
    expect(await invalid(proveInclusion(log.source, 5, 5))).toBe(true);
    expect(await invalid(proveInclusion(log.source, -1, 5))).toBe(true);
    expect(await invalid(proveInclusion(log.source, 0.5, 5))).toBe(true);
    expect(await invalid(proveConsistency(log.source, 0, 5))).toBe(true);
    expect(await invalid(proveConsistency(log.source, 4, 3))).toBe(true);
    expect(await invalid(treeRoot(log.source, -1))).toBe(true);
    expect(await invalid(treeRoot(log.source, 2 ** 53))).toBe(true);
  });
});

describe('subtrees of a growing log', () => {
  it('are the ones the frontier completes, with the same hashes', () => {
    const leaves = randomLeaves(N);
    const stored = storedLog(leaves).nodes;
    const frontier = new MerkleFrontier();
    let completed = 0;
    leaves.forEach((leaf, i) => {
      for (const n of frontier.append(leaf)) {
        expect(n.level).toBeGreaterThanOrEqual(1);
        expect(lastLeaf(n)).toBe(i);
        expect(n.hash).toEqual(stored.get(`${n.level}/${n.index}`));
        expect(n.hash).toEqual(rootHash(leaves.slice(n.index * 2 ** n.level, lastLeaf(n) + 1)));
        completed++;
      }
    });
    // A tree of n leaves has n - popcount(n) complete subtrees above its leaves.
    expect(completed).toBe(N - 2);
    expect(stored.size).toBe(N + completed);
  });

  it('need one stored sibling per trailing 1 bit of the new index', () => {
    expect(appendSiblings(0)).toEqual([]);
    expect(appendSiblings(6)).toEqual([]);
    expect(appendSiblings(7)).toEqual([
      { level: 0, index: 6 },
      { level: 1, index: 2 },
      { level: 2, index: 0 },
    ]);
    expect(appendSiblings(2 ** 40 + 1)).toEqual([{ level: 0, index: 2 ** 40 }]);
    expect(() => completedSubtrees(7, Buffer.alloc(32), [Buffer.alloc(32)])).toThrow(
      IllegalStateError,
    );
  });

  it('split a range into aligned perfect subtrees, largest first', () => {
    expect(rangeSubtrees(0, 13)).toEqual([
      { level: 3, index: 0 },
      { level: 2, index: 2 },
      { level: 0, index: 12 },
    ]);
    expect(rangeSubtrees(8, 11)).toEqual([
      { level: 1, index: 4 },
      { level: 0, index: 10 },
    ]);
    expect(rangeSubtrees(2 ** 40, 2 ** 40 + 2 ** 39)).toEqual([{ level: 39, index: 2 }]);
    expect(() => rangeSubtrees(3, 7)).toThrow(IllegalStateError);
    expect(() => rangeSubtrees(5, 5)).toThrow(IllegalStateError);
  });
});
