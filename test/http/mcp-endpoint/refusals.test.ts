import { describe, expect, it } from 'vitest';
import { boundedText } from '../../../src/http/mcp-endpoint/refusals.js';

describe('boundedText (what an agent sent, as a refusal records it)', () => {
  it('keeps text of up to 256 characters whole', () => {
    const text = 'x'.repeat(256);
    expect(boundedText(text)).toBe(text);
  });

  it('cuts longer text at 256 characters and says so', () => {
    expect(boundedText('y'.repeat(300))).toBe(`${'y'.repeat(256)}…`);
  });

  it('never ends on half a surrogate pair', () => {
    const cut = boundedText(`${'a'.repeat(255)}😀tail`);
    expect(cut).toBe(`${'a'.repeat(255)}…`);
    expect(/[\uD800-\uDBFF](?![\uDC00-\uDFFF])/.test(cut)).toBe(false);
  });

  it('removes known secret shapes before cutting', () => {
    const token = `ghp_${'a1B2c3D4e5'.repeat(3)}f6G7h8`;
    const shown = boundedText(`tool-${token}`);
    expect(shown).not.toContain(token.slice(4));
    expect(shown).toContain('[REDACTED:github-token]');
  });
});
