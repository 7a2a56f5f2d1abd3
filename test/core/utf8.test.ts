import { describe, expect, it } from 'vitest';
import { utf8Prefix } from '../../src/core/index.js';

const bytes = (s: string): number => Buffer.byteLength(s);

describe('utf8Prefix', () => {
  it('returns text that fits as it is', () => {
    expect(utf8Prefix('héllo', 6)).toBe('héllo');
    expect(utf8Prefix('', 0)).toBe('');
  });

  it('counts bytes, not characters', () => {
    // 4 characters of 3 bytes each: a character count of 6 would keep all 4 (12 bytes).
    expect(utf8Prefix('€€€€', 6)).toBe('€€');
    expect(utf8Prefix('abc', 2)).toBe('ab');
  });

  it('never ends inside a character, surrogate pairs included', () => {
    expect(utf8Prefix('€€€€', 8)).toBe('€€'); // 9 would be the third's end
    expect(utf8Prefix('a😀b', 4)).toBe('a'); // the emoji is 4 bytes, 2 UTF-16 units
    expect(utf8Prefix('a😀b', 5)).toBe('a😀');
    expect(utf8Prefix('é', 1)).toBe('');
    expect(utf8Prefix('abc', 0)).toBe('');
    expect(utf8Prefix('abc', -1)).toBe('');
  });

  it('keeps the longest prefix within the bound, for every bound', () => {
    const text = 'aé€😀'.repeat(5);
    for (let max = 0; max <= bytes(text); max++) {
      const cut = utf8Prefix(text, max);
      expect(text.startsWith(cut)).toBe(true);
      expect(bytes(cut)).toBeLessThanOrEqual(max);
      // One more code point would not fit.
      const next = text.codePointAt(cut.length);
      if (next !== undefined)
        expect(bytes(cut) + bytes(String.fromCodePoint(next))).toBeGreaterThan(max);
    }
  });
});
