import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { verifyConsistency, verifyInclusion } from '../../src/audit/index.js';

const VECTORS = fileURLToPath(new URL('../fixtures/vectors/rfc6962', import.meta.url));

interface InclusionVector {
  leafIdx: number;
  treeSize: number;
  root: string;
  leafHash: string;
  proof: string[] | null;
  desc: string;
  wantErr: boolean;
}

interface ConsistencyVector {
  size1: number;
  size2: number;
  root1: string;
  root2: string;
  proof: string[] | null;
  desc: string;
  wantErr: boolean;
}

function jsonFiles(dir: string): string[] {
  return readdirSync(dir, { recursive: true, encoding: 'utf8' })
    .filter((f) => f.endsWith('.json'))
    .sort()
    .map((f) => path.join(dir, f));
}

function load<T>(file: string): T {
  return JSON.parse(readFileSync(file, 'utf8')) as T;
}

const b64 = (s: string): Buffer => Buffer.from(s, 'base64');

describe('RFC 6962 inclusion vectors', () => {
  const files = jsonFiles(path.join(VECTORS, 'inclusion'));

  it('finds the vector files', () => {
    expect(files.length).toBeGreaterThanOrEqual(90);
  });

  it.each(files.map((f) => [path.relative(VECTORS, f), f]))('%s', (_name, file) => {
    const v = load<InclusionVector>(file);
    const ok = verifyInclusion(
      b64(v.leafHash),
      v.leafIdx,
      v.treeSize,
      (v.proof ?? []).map(b64),
      b64(v.root),
    );
    expect(ok).toBe(!v.wantErr);
  });
});

describe('RFC 6962 consistency vectors', () => {
  const files = jsonFiles(path.join(VECTORS, 'consistency'));

  it('finds the vector files', () => {
    expect(files.length).toBeGreaterThanOrEqual(90);
  });

  it.each(files.map((f) => [path.relative(VECTORS, f), f]))('%s', (_name, file) => {
    const v = load<ConsistencyVector>(file);
    const ok = verifyConsistency(
      v.size1,
      v.size2,
      (v.proof ?? []).map(b64),
      b64(v.root1),
      b64(v.root2),
    );
    expect(ok).toBe(!v.wantErr);
  });
});
