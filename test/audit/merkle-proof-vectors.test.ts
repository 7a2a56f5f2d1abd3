import { readFileSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { proveConsistency, proveInclusion, treeRoot } from '../../src/audit/index.js';
import { REFERENCE_LEAVES } from './merkle-reference.js';
import { storedLog } from './stored-log.js';

// The proofs the gateway serves (from stored subtrees) are the proofs of the RFC 6962 vectors:
// merkle-vectors.test.ts checks our verifiers on every vector; this checks our prover on every
// happy path, each a proof in the tree of the first 1..8 reference leaves.
const VECTORS = fileURLToPath(new URL('../fixtures/vectors/rfc6962', import.meta.url));

/** The happy-path vector files of one kind (the numbered folders). */
function happyPaths(kind: 'inclusion' | 'consistency'): string[] {
  return readdirSync(path.join(VECTORS, kind), { recursive: true, encoding: 'utf8' })
    .filter((f) => f.endsWith('happy-path.json'))
    .sort()
    .map((f) => path.join(VECTORS, kind, f));
}

const load = <T>(file: string): T => JSON.parse(readFileSync(file, 'utf8')) as T;
const b64 = (h: Buffer): string => h.toString('base64');

describe('proofs from stored subtrees reproduce the RFC 6962 vectors', () => {
  const log = storedLog(REFERENCE_LEAVES);

  it('finds the happy paths, five of each kind', () => {
    expect(happyPaths('inclusion')).toHaveLength(5);
    expect(happyPaths('consistency')).toHaveLength(5);
  });

  it.each(happyPaths('inclusion').map((f) => [path.relative(VECTORS, f), f]))(
    '%s',
    async (_name, file) => {
      const v = load<{
        leafIdx: number;
        treeSize: number;
        root: string;
        leafHash: string;
        proof: string[] | null;
      }>(file);
      expect(b64(REFERENCE_LEAVES[v.leafIdx] as Buffer)).toBe(v.leafHash);
      const p = await proveInclusion(log.source, v.leafIdx, v.treeSize);
      expect(p.proof.map(b64)).toEqual(v.proof ?? []);
      expect(b64(p.rootHash)).toBe(v.root);
      expect(b64(await treeRoot(log.source, v.treeSize))).toBe(v.root);
    },
  );

  it.each(happyPaths('consistency').map((f) => [path.relative(VECTORS, f), f]))(
    '%s',
    async (_name, file) => {
      const v = load<{
        size1: number;
        size2: number;
        root1: string;
        root2: string;
        proof: string[] | null;
      }>(file);
      const p = await proveConsistency(log.source, v.size1, v.size2);
      expect(p.proof.map(b64)).toEqual(v.proof ?? []);
      expect([b64(p.fromRoot), b64(p.toRoot)]).toEqual([v.root1, v.root2]);
    },
  );
});
