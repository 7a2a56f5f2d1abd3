import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import {
  MerkleFrontier,
  emptyRoot,
  leafHash,
  nodeHash,
  verifyConsistency,
  verifyInclusion,
} from '../../src/audit/index.js';
import { isGatehouseError } from '../../src/core/index.js';
import {
  REFERENCE_LEAVES,
  consistencyProof,
  inclusionProof,
  rootHash,
} from './merkle-reference.js';

const REFERENCE_ROOTS = [
  '6e340b9cffb37a989ca544e6bb780a2c78901d3fb33738768511a30617afa01d',
  'fac54203e7cc696cf0dfcb42c92a1d9dbaf70ad9e621f4bd8d98662f00e3c125',
  'aeb6bcfe274b70a14fb067a5e5578264db0fa9b51af5e0ba159158f329e06e77',
  'd37ee418976dd95753c1c73862b9398fa2a2cf9b4ff0fdfe8b30cd95209614b7',
  '4e3bbb1f7b478dcfe71fb631631519a3bca12c9aefca1612bfce4c13a86264d4',
  '76e67dadbcdf1e10e1b74ddc608abd2f98dfb16fbce75277b5232a127f2087ef',
  'ddb89be403809e325750d3d263cd78929c2942b7942a34b77e122c9594a74c8c',
  '5dc9da79a70659a9ad559cb701ded9a2ab9d823aad2f4960cfe370eff4604328',
];

/** MTH straight from the RFC's recursive definition, as an independent reference. */
function referenceRoot(leaves: readonly Buffer[]): Buffer {
  if (leaves.length === 0) return createHash('sha256').digest();
  if (leaves.length === 1) return leaves[0] as Buffer;
  let k = 1;
  while (k * 2 < leaves.length) k *= 2;
  return nodeHash(referenceRoot(leaves.slice(0, k)), referenceRoot(leaves.slice(k)));
}

function randomLeaves(n: number): Buffer[] {
  return Array.from({ length: n }, (_, i) => leafHash(Buffer.from(`leaf-${i}-${Math.random()}`)));
}

function flipBit(b: Buffer): Buffer {
  const c = Buffer.from(b);
  c[0] = (c[0] as number) ^ 1;
  return c;
}

describe('merkle hashes', () => {
  it('uses the RFC 6962 domain prefixes', () => {
    const sha = (b: Buffer) => createHash('sha256').update(b).digest();
    expect(leafHash(Buffer.from('ab'))).toEqual(sha(Buffer.from('006162', 'hex')));
    const l = Buffer.alloc(32, 1);
    const r = Buffer.alloc(32, 2);
    expect(nodeHash(l, r)).toEqual(sha(Buffer.concat([Buffer.from([1]), l, r])));
    expect(emptyRoot().toString('hex')).toBe(
      'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855',
    );
  });

  it('computes the reference roots for sizes 1..8', () => {
    for (let n = 1; n <= 8; n++) {
      expect(rootHash(REFERENCE_LEAVES, n).toString('hex')).toBe(REFERENCE_ROOTS[n - 1]);
    }
    expect(rootHash([])).toEqual(emptyRoot());
  });
});

describe('rootHash and MerkleFrontier', () => {
  it('agree with each other and with the recursive definition for sizes 0..70', () => {
    const leaves = randomLeaves(70);
    const frontier = new MerkleFrontier();
    expect(frontier.root()).toEqual(emptyRoot());
    for (let n = 1; n <= 70; n++) {
      frontier.append(leaves[n - 1] as Buffer);
      expect(frontier.size).toBe(n);
      const expected = referenceRoot(leaves.slice(0, n));
      expect(rootHash(leaves, n)).toEqual(expected);
      expect(frontier.root()).toEqual(expected);
    }
  });

  it('keeps one hash per set bit of the size and resumes from them', () => {
    const leaves = randomLeaves(45);
    const f = new MerkleFrontier();
    for (const l of leaves.slice(0, 37)) f.append(l);
    expect(f.hashes).toHaveLength(3); // 37 = 0b100101
    const resumed = MerkleFrontier.restore(f.size, f.hashes);
    for (const l of leaves.slice(37)) resumed.append(l);
    expect(resumed.root()).toEqual(rootHash(leaves));
    expect(() => MerkleFrontier.restore(37, f.hashes.slice(1))).toThrow(/needs 3 subtree hashes/);
  });
});

describe('the reference proofs (slow, from every leaf)', () => {
  it('makes inclusion proofs that verify for every index of trees of 1..70 leaves', () => {
    const leaves = randomLeaves(70);
    for (let size = 1; size <= 70; size++) {
      const root = rootHash(leaves, size);
      for (let i = 0; i < size; i++) {
        const proof = inclusionProof(leaves, i, size);
        const leaf = leaves[i] as Buffer;
        expect(verifyInclusion(leaf, i, size, proof, root)).toBe(true);
        // The same proof must not prove another position, another leaf, or another root.
        if (size > 1) expect(verifyInclusion(leaf, (i + 1) % size, size, proof, root)).toBe(false);
        expect(verifyInclusion(flipBit(leaf), i, size, proof, root)).toBe(false);
        expect(verifyInclusion(leaf, i, size, proof, flipBit(root))).toBe(false);
        if (proof.length > 0) {
          expect(verifyInclusion(leaf, i, size, proof.slice(1), root)).toBe(false);
          expect(verifyInclusion(leaf, i, size, [...proof, root], root)).toBe(false);
        }
      }
    }
  });

  it('makes consistency proofs that verify for every pair of sizes up to 70', () => {
    const leaves = randomLeaves(70);
    const roots = Array.from({ length: 71 }, (_, n) => rootHash(leaves, n));
    for (let to = 1; to <= 70; to++) {
      for (let from = 1; from <= to; from++) {
        const proof = consistencyProof(leaves, from, to);
        const r1 = roots[from] as Buffer;
        const r2 = roots[to] as Buffer;
        expect(verifyConsistency(from, to, proof, r1, r2)).toBe(true);
        if (from < to) {
          expect(verifyConsistency(from, to, proof, flipBit(r1), r2)).toBe(false);
          expect(verifyConsistency(from, to, proof, r1, flipBit(r2))).toBe(false);
          expect(verifyConsistency(from, to, proof.slice(0, -1), r1, r2)).toBe(false);
        } else {
          expect(proof).toEqual([]);
        }
      }
    }
  });

  it('detects a rewritten history', () => {
    const leaves = randomLeaves(20);
    const forged = [...leaves];
    forged[3] = leafHash(Buffer.from('rewritten'));
    const proof = consistencyProof(forged, 10, 20);
    expect(verifyConsistency(10, 20, proof, rootHash(leaves, 10), rootHash(forged, 20))).toBe(
      false,
    );
  });

  it('refuses impossible requests with INVALID_INPUT', () => {
    const leaves = randomLeaves(5);
    const invalid = (fn: () => unknown) => {
      try {
        fn();
      } catch (err) {
        return isGatehouseError(err, 'INVALID_INPUT');
      }
      return false;
    };
    expect(invalid(() => inclusionProof(leaves, 5, 5))).toBe(true);
    expect(invalid(() => inclusionProof(leaves, -1, 5))).toBe(true);
    expect(invalid(() => inclusionProof(leaves, 0, 6))).toBe(true);
    expect(invalid(() => consistencyProof(leaves, 0, 5))).toBe(true);
    expect(invalid(() => consistencyProof(leaves, 4, 3))).toBe(true);
    expect(invalid(() => rootHash(leaves, 6))).toBe(true);
  });
});

describe('verifiers never throw', () => {
  it('answers false on malformed input', () => {
    const h = Buffer.alloc(32);
    const bad = [null, undefined, 'x', {}, [h, 'x']] as unknown as Buffer[][];
    for (const p of bad) {
      expect(verifyInclusion(h, 0, 2, p, h)).toBe(false);
      expect(verifyConsistency(1, 2, p, h, h)).toBe(false);
    }
    expect(verifyInclusion(h, 0.5, 2, [h], h)).toBe(false);
    expect(verifyInclusion(h, -1, 2, [h], h)).toBe(false);
    expect(verifyConsistency(1, Number.NaN, [h], h, h)).toBe(false);
    expect(verifyInclusion(null as unknown as Buffer, 0, 1, [], h)).toBe(false);
  });

  it('handles sizes beyond 2^32', () => {
    // A tree of 2^33 + 5 leaves is a perfect 2^33 subtree B, then [4-leaf subtree A, last leaf].
    const size = 2 ** 33 + 5;
    const leaf = Buffer.alloc(32, 9);
    const a = Buffer.alloc(32, 1);
    const b = Buffer.alloc(32, 2);
    const root = nodeHash(b, nodeHash(a, leaf));
    expect(verifyInclusion(leaf, size - 1, size, [a, b], root)).toBe(true);
    expect(verifyInclusion(leaf, size - 2, size, [a, b], root)).toBe(false);
    expect(verifyConsistency(2 ** 33, size, [nodeHash(a, leaf)], b, root)).toBe(true);
  });
});
