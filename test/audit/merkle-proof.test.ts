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

const N = 72;

function randomLeaves(n: number): Buffer[] {
  return Array.from({ length: n }, (_, i) => leafHash(Buffer.from(`leaf-${i}-${Math.random()}`)));
}

/**
 * A log of `leaves` whose subtrees were stored the way a store does on append: each leaf's
 * completed subtrees from its stored siblings. Counts what proofs read, and refuses to read a
 * subtree that is not complete, as a store has none.
 */
function storedLog(leaves: readonly Buffer[]) {
  const nodes = new Map<string, Buffer>();
  const key = (r: SubtreeRef) => `${r.level}/${r.index}`;
  leaves.forEach((leaf, i) => {
    nodes.set(key({ level: 0, index: i }), leaf);
    const siblings = appendSiblings(i).map((r) => nodes.get(key(r)) as Buffer);
    for (const n of completedSubtrees(i, leaf, siblings)) nodes.set(key(n), n.hash);
  });
  const reads: SubtreeRef[][] = [];
  const source: SubtreeSource = (refs) => {
    reads.push([...refs]);
    return Promise.resolve(
      refs.map((r) => {
        const h = nodes.get(key(r));
        if (!h) throw new Error(`subtree ${key(r)} is not stored`);
        return h;
      }),
    );
  };
  return { source, reads, nodes };
}

/** The last leaf a subtree covers. */
const lastLeaf = (r: SubtreeRef): number => (r.index + 1) * 2 ** r.level - 1;

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
        expect(p.proof).toEqual(inclusionProof(leaves, index, size));
        expect(p.rootHash).toEqual(root);
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
        expect(p.proof).toEqual(consistencyProof(leaves, from, to));
        expect(p.fromRoot).toEqual(roots[from]);
        expect(p.toRoot).toEqual(roots[to]);
        expect(verifyConsistency(from, to, p.proof, p.fromRoot, p.toRoot)).toBe(true);
        const read = log.reads.flat();
        expect(read.length).toBeLessThanOrEqual(3 * Math.ceil(Math.log2(to)) + 2);
        expect(read.every((r) => lastLeaf(r) < to)).toBe(true);
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
