import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { canonicalBytes } from '../../src/core/index.js';

// RFC 8785 vectors from cyberphone/json-canonicalization (see test/fixtures/vectors/README.md).
const VECTORS = fileURLToPath(new URL('../fixtures/vectors/jcs', import.meta.url));

const names = readdirSync(path.join(VECTORS, 'input'))
  .filter((f) => f.endsWith('.json'))
  .sort();

describe('RFC 8785 (JCS) vectors', () => {
  it('finds the vector files', () => {
    expect(names).toEqual([
      'arrays.json',
      'french.json',
      'structures.json',
      'unicode.json',
      'values.json',
      'weird.json',
    ]);
  });

  it.each(names)('%s: input canonicalizes to the bytes of output', (name) => {
    const input: unknown = JSON.parse(readFileSync(path.join(VECTORS, 'input', name), 'utf8'));
    const expected = readFileSync(path.join(VECTORS, 'output', name));
    expect(canonicalBytes(input).toString('hex')).toBe(expected.toString('hex'));
  });

  it.each(names)('%s: output agrees with outhex', (name) => {
    const hex = readFileSync(path.join(VECTORS, 'outhex', name.replace(/\.json$/, '.txt')), 'utf8');
    const expected = readFileSync(path.join(VECTORS, 'output', name));
    expect(hex.replace(/\s+/g, '')).toBe(expected.toString('hex'));
  });
});
