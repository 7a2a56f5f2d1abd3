import { describe, expect, it, vi } from 'vitest';
import { LineOverBound, MessageLines } from '../../../src/mcp/upstream/message-lines.js';

const ping = (id: number): string => JSON.stringify({ jsonrpc: '2.0', id, method: 'ping' });

describe('MessageLines', () => {
  it('gives each message once its newline comes, across chunks and several to a chunk', () => {
    const lines = new MessageLines(1024);
    const text = `${ping(1)}\n${ping(2)}\r\n${ping(3)}\n`;
    expect(lines.append(Buffer.from(text.slice(0, 10)))).toEqual([]);
    const rest = lines.append(Buffer.from(text.slice(10, text.length - 5)));
    expect(rest.map((m) => (m as { id: number }).id)).toEqual([1, 2]);
    expect(lines.append(Buffer.from(text.slice(text.length - 5)))).toEqual([
      { jsonrpc: '2.0', id: 3, method: 'ping' },
    ]);
  });

  it('skips a line that is not JSON, refuses JSON that is not JSON-RPC', () => {
    const lines = new MessageLines(1024);
    expect(lines.append(Buffer.from(`starting up…\n${ping(4)}\n`))).toEqual([
      { jsonrpc: '2.0', id: 4, method: 'ping' },
    ]);
    expect(() => lines.append(Buffer.from('{"hello":1}\n'))).toThrow();
  });

  it('keeps a character split between chunks whole', () => {
    const lines = new MessageLines(1024);
    const bytes = Buffer.from(
      `${JSON.stringify({ jsonrpc: '2.0', method: 'n', params: { s: 'é€' } })}\n`,
    );
    const cut = bytes.indexOf(0xe2) + 1; // inside the three bytes of €
    expect(lines.append(bytes.subarray(0, cut))).toEqual([]);
    expect(lines.append(bytes.subarray(cut))).toEqual([
      { jsonrpc: '2.0', method: 'n', params: { s: 'é€' } },
    ]);
  });

  it('refuses a message past its bound, whether its end came or not, and drops what it held', () => {
    const lines = new MessageLines(100);
    lines.append(Buffer.from('x'.repeat(60)));
    expect(() => lines.append(Buffer.from('x'.repeat(60)))).toThrow(LineOverBound);
    // The bound is per message: what was held is gone, the next message starts empty.
    expect(() => lines.append(Buffer.from(`${'y'.repeat(101)}\n`))).toThrow(LineOverBound);
    expect(lines.append(Buffer.from(`${ping(5)}\n`))).toHaveLength(1);
  });

  it('joins a message as text once, however many chunks it came in (never a buffer per chunk)', () => {
    const lines = new MessageLines(4 * 1024 * 1024);
    const text = JSON.stringify({ jsonrpc: '2.0', id: 9, result: { t: 'x'.repeat(2_000_000) } });
    const bytes = Buffer.from(`${text}\n`);
    const concat = vi.spyOn(Buffer, 'concat');
    try {
      let got: unknown[] = [];
      for (let at = 0; at < bytes.length; at += 65_536)
        got = got.concat(lines.append(bytes.subarray(at, at + 65_536)));
      expect(got).toHaveLength(1);
      expect(got[0]).toMatchObject({ id: 9, result: { t: 'x'.repeat(2_000_000) } });
      expect(concat).not.toHaveBeenCalled();
    } finally {
      concat.mockRestore();
    }
  });
});
