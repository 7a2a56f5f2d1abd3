import canonicalizeImpl from 'canonicalize';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { canonicalJson } from '../../src/core/index.js';

// An independent RFC 8785 implementation to compare with (the one the project used before).
// canonicalize ships CommonJS typings with `export =`; at runtime the default import is the function.
const canonicalize = canonicalizeImpl as unknown as (value: unknown) => string;

describe('canonicalJson', () => {
  it('writes what an independent JCS implementation writes, for any JSON value', () => {
    fc.assert(
      fc.property(fc.jsonValue(), (value) => {
        expect(canonicalJson(value)).toBe(canonicalize(value));
      }),
      { numRuns: 2000 },
    );
  });

  it('sorts member names by UTF-16 code units, integer-like names included', () => {
    // An object lists integer-like names first in numeric order; JCS sorts them as strings.
    expect(
      canonicalJson({ b: 1, 10: 2, 9: 3, a: 4, '\u00e9': 5, '\ud83d\ude00': 6, '\uff41': 7 }),
    ).toBe('{"10":2,"9":3,"a":4,"b":1,"é":5,"😀":6,"ａ":7}');
  });

  it('sorts short and long member lists alike (insertion sort up to 24 names, then the built-in)', () => {
    for (const n of [2, 24, 25, 60]) {
      const names = Array.from(
        { length: n },
        (_, i) => `k${String.fromCharCode(0x7a - (i % 26))}${n - i}`,
      );
      const value = Object.fromEntries(names.map((name, i) => [name, i]));
      expect(canonicalJson(value)).toBe(canonicalize(value));
      expect(Object.keys(JSON.parse(canonicalJson(value)) as object)).toEqual([...names].sort());
    }
  });

  it('leaves out undefined members, writes undefined array items as null, honours toJSON', () => {
    expect(
      canonicalJson({ a: undefined, b: [undefined, 1], c: new Date(0), d: { toJSON: () => 'x' } }),
    ).toBe('{"b":[null,1],"c":"1970-01-01T00:00:00.000Z","d":"x"}');
  });

  it('writes numbers as ECMAScript does (JCS §3.2.2.3)', () => {
    expect(canonicalJson([-0, 1e21, 1e-7, 0.1 + 0.2, 333333333.3333333, 2 ** 53])).toBe(
      '[0,1e+21,1e-7,0.30000000000000004,333333333.3333333,9007199254740992]',
    );
  });

  it('refuses what has no JSON form', () => {
    expect(() => canonicalJson(undefined)).toThrow(TypeError);
    expect(() => canonicalJson({ a: Number.NaN })).toThrow(TypeError);
    expect(() => canonicalJson([Number.POSITIVE_INFINITY])).toThrow(TypeError);
    expect(() => canonicalJson({ a: 1n })).toThrow(TypeError);
  });
});
