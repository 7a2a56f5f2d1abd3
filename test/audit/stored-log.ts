/**
 * Logs whose subtree hashes were stored the way an AuditStore stores them on append (each leaf's
 * completed subtrees from its stored siblings), held in memory, for tests of the proofs served
 * from them; and a seeded random source, so a generated case that fails can be replayed.
 */
import { appendSiblings, completedSubtrees } from '../../src/audit/index.js';
import type { SubtreeRef, SubtreeSource } from '../../src/audit/index.js';

/** A log's stored subtrees, what proofs read from them, and a source that counts the reads. */
export interface StoredLog {
  /** Reads stored subtrees; refuses (throws) one that is not complete, as a store has none. */
  source: SubtreeSource;
  /** Each batch the source was asked for, in order. */
  reads: SubtreeRef[][];
  /** The stored hashes by `level/index`, leaves (level 0) included. */
  nodes: Map<string, Buffer>;
}

/** The key of a subtree in {@link StoredLog.nodes}. */
export const subtreeKey = (r: SubtreeRef): string => `${r.level}/${r.index}`;

/** The last leaf a subtree covers. */
export const lastLeaf = (r: SubtreeRef): number => (r.index + 1) * 2 ** r.level - 1;

/** The stored subtrees of a log of `leaves` (leaf hashes), appended one by one. */
export function storedLog(leaves: readonly Buffer[]): StoredLog {
  const nodes = new Map<string, Buffer>();
  leaves.forEach((leaf, i) => {
    nodes.set(subtreeKey({ level: 0, index: i }), leaf);
    const siblings = appendSiblings(i).map((r) => nodes.get(subtreeKey(r)) as Buffer);
    for (const n of completedSubtrees(i, leaf, siblings)) nodes.set(subtreeKey(n), n.hash);
  });
  const reads: SubtreeRef[][] = [];
  const source: SubtreeSource = (refs) => {
    reads.push([...refs]);
    return Promise.resolve(
      refs.map((r) => {
        const h = nodes.get(subtreeKey(r));
        if (!h) throw new Error(`subtree ${subtreeKey(r)} is not stored`);
        return h;
      }),
    );
  };
  return { source, reads, nodes };
}

/**
 * A deterministic source of integers in [lo, hi] (mulberry32): the same seed gives the same
 * cases, so a failure names a seed that reproduces it.
 */
export function seededInts(seed: number): (lo: number, hi: number) => number {
  let a = seed >>> 0;
  return (lo, hi) => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    const unit = ((t ^ (t >>> 14)) >>> 0) / 4294967296;
    return lo + Math.floor(unit * (hi - lo + 1));
  };
}
