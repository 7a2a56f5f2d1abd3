import { describe, expect, it } from 'vitest';
import { McpToolNames } from '../../src/http/mcp-endpoint/names.js';

describe('McpToolNames', () => {
  it('makes names MCP-safe, stable and reversible', () => {
    const names = new McpToolNames([
      { id: 'demo/echo', version: '1.0.0' },
      { id: 'demo/propose-change', version: '2.0.0-rc.1' },
    ]);
    expect(names.nameOf({ id: 'demo/echo', version: '1.0.0' })).toBe('demo_echo__1_0_0');
    expect(names.nameOf({ id: 'demo/propose-change', version: '2.0.0-rc.1' })).toBe(
      'demo_propose-change__2_0_0-rc_1',
    );
    expect(names.refOf('demo_echo__1_0_0')).toEqual({ id: 'demo/echo', version: '1.0.0' });
    expect(names.refOf('demo_echo__1_0_1')).toBeUndefined();
  });

  it('keeps names apart when two tools would share one, and bounds their length', () => {
    const refs = [
      { id: 'a/b', version: '1.0.0' },
      { id: 'a.b', version: '1.0.0' },
      { id: `x/${'long'.repeat(20)}`, version: '1.0.0' },
    ];
    const names = new McpToolNames(refs);
    const out = refs.map((r) => names.nameOf(r));
    expect(new Set(out).size).toBe(3);
    for (const [i, n] of out.entries()) {
      expect(n).toMatch(/^[A-Za-z0-9_-]{1,64}$/);
      expect(names.refOf(n)).toEqual(refs[i]);
    }
    // Independent of order.
    const reversed = new McpToolNames([...refs].reverse());
    expect(refs.map((r) => reversed.nameOf(r))).toEqual(out);
  });

  it('keeps upstream names where they are safe and unique, and falls back to versioned ones', () => {
    const refs = [
      { id: 'fs/read', version: '1.0.0', upstreamName: 'read_file' },
      { id: 'fs/write', version: '1.0.0', upstreamName: 'write_file' },
      // Two tools (two upstreams) that both call themselves "search": neither keeps it.
      { id: 'web/search', version: '1.0.0', upstreamName: 'search' },
      { id: 'docs/search', version: '2.0.0', upstreamName: 'search' },
      { id: 'x/dotted', version: '1.0.0', upstreamName: 'has.dot' },
      // An upstream name that is another tool's versioned name is not taken either.
      { id: 'y/trick', version: '1.0.0', upstreamName: 'demo_echo__1_0_0' },
      { id: 'demo/echo', version: '1.0.0' },
    ];
    const names = new McpToolNames(refs);
    expect(refs.map((r) => names.nameOf(r))).toEqual([
      'read_file',
      'write_file',
      'web_search__1_0_0',
      'docs_search__2_0_0',
      'x_dotted__1_0_0',
      'y_trick__1_0_0',
      'demo_echo__1_0_0',
    ]);
    expect(names.refOf('read_file')).toEqual({ id: 'fs/read', version: '1.0.0' });
    expect(names.refOf('search')).toBeUndefined();
    const reversed = new McpToolNames([...refs].reverse());
    expect(refs.map((r) => reversed.nameOf(r))).toEqual(refs.map((r) => names.nameOf(r)));
  });
});
