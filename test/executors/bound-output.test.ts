import { describe, expect, it } from 'vitest';
import { boundOutput } from '../../src/executors/mcp/bound-output.js';

const bytes = (v: unknown): number => Buffer.byteLength(JSON.stringify(v));

describe('boundOutput', () => {
  it('returns an output within the bound as it is', () => {
    const out = { content: [{ type: 'text', text: '€'.repeat(10) }] };
    expect(boundOutput(out, 1000)).toBe(out);
  });

  it('cuts multi-byte text by bytes, keeping whole characters', () => {
    // 3 000 characters of 3 bytes: cut by characters, half the bound would keep 9 000 bytes.
    const out = { content: [{ type: 'text', text: '€'.repeat(3000) }], structuredContent: {} };
    const cut = boundOutput(out, 2000) as {
      content: { text: string }[];
      truncated: { originalBytes: number; keptBytes: number };
    };
    expect(cut.content[0]!.text).toBe('€'.repeat(333));
    expect(bytes(cut)).toBeLessThanOrEqual(2000);
    expect(cut).not.toHaveProperty('structuredContent');
    expect(cut.truncated).toEqual({ originalBytes: bytes(out), keptBytes: bytes(cut.content) });
  });

  it('never splits a surrogate pair', () => {
    const out = { content: [{ type: 'text', text: `a${'😀'.repeat(1000)}` }] };
    const text = (boundOutput(out, 1001) as { content: { text: string }[] }).content[0]!.text;
    // Half of 1001 is 500 bytes: 1 + 4·124 = 497 fit, 125 would be 501.
    expect(text).toBe(`a${'😀'.repeat(124)}`);
  });

  it('counts other content by its bytes too', () => {
    // About 150 characters but about 350 bytes: counted in characters it would fit the 150 left.
    const image = { type: 'image', data: '€'.repeat(100), mimeType: 'image/png' };
    const out = {
      content: [
        { type: 'text', text: 'x'.repeat(450) },
        image,
        { type: 'text', text: 'y'.repeat(2000) },
      ],
    };
    const cut = boundOutput(out, 1200) as { content: unknown[] };
    expect(cut.content).toEqual([
      { type: 'text', text: 'x'.repeat(450) },
      { type: 'text', text: 'y'.repeat(150) },
    ]);
  });
});
