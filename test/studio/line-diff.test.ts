import { describe, expect, it } from 'vitest';
import { diffText, lineDiff } from '../../studio/src/line-diff.js';

describe("the Studio's line diff of a changed tool field", () => {
  it('keeps common lines, and shows a replaced line removed then added', () => {
    expect(lineDiff('a\nb\nc', 'a\nB\nc')).toBe(' a\n-b\n+B\n c');
  });

  it('shows lines only added, or only removed', () => {
    expect(lineDiff('a\nc', 'a\nb\nc')).toBe(' a\n+b\n c');
    expect(lineDiff('a\nb', 'a')).toBe(' a\n-b');
    expect(lineDiff('', 'x')).toBe('+x');
    expect(lineDiff('x', '')).toBe('-x');
  });

  it('shows texts too long to align as all removed, then all added', () => {
    const long = Array.from({ length: 1001 }, (_, i) => `l${i}`).join('\n');
    const d = lineDiff(long, `${long}\nmore`).split('\n');
    expect(d).toHaveLength(1001 + 1002);
    expect(d[0]).toBe('-l0');
    expect(d.at(-1)).toBe('+more');
  });

  it('writes strings as they are, other values as pretty JSON, an absent field as nothing', () => {
    expect(diffText('Says hello.')).toBe('Says hello.');
    expect(diffText({ a: 1 })).toBe('{\n  "a": 1\n}');
    expect(diffText(undefined)).toBe('');
  });
});
