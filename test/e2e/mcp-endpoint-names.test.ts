import { describe, expect, it } from 'vitest';
import { McpToolNames } from '../../src/http/mcp-endpoint/names.js';
import { PromptNames } from '../../src/http/mcp-endpoint/prompt-names.js';

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

describe('PromptNames', () => {
  const a = { id: 'srv-a', label: 'alpha' };
  const b = { id: 'srv-b', label: 'beta' };
  const lists = [
    { r: a, items: [{ name: 'greet' }, { name: 'shared' }, { name: 'x__y' }] },
    { r: b, items: [{ name: 'shared' }, { name: 'summarise' }] },
  ];

  it('labels every prompt by default, and resolves only labelled names', () => {
    const names = new PromptNames(false);
    expect(names.name(lists).map((x) => x.name)).toEqual([
      'alpha__greet',
      'alpha__shared',
      'alpha__x__y',
      'beta__shared',
      'beta__summarise',
    ]);
    expect(names.resolve('beta__shared', [a, b])).toEqual({ server: b, prompt: 'shared' });
    expect(names.resolve('alpha__x__y', [a, b])).toEqual({ server: a, prompt: 'x__y' });
    expect(names.resolve('greet', [a, b])).toBeUndefined();
    expect(names.resolve('gamma__greet', [a, b])).toBeUndefined();
  });

  it('keeps unique names that hold no "__" when asked, labelling the rest', () => {
    const names = new PromptNames(true);
    expect(names.name(lists).map((x) => x.name)).toEqual([
      'greet',
      'alpha__shared',
      'alpha__x__y',
      'beta__shared',
      'summarise',
    ]);
    expect(names.resolve('greet', [a, b])).toEqual({ server: a, prompt: 'greet' });
    expect(names.resolve('summarise', [a, b])).toEqual({ server: b, prompt: 'summarise' });
    // A shared name is not kept for either server; the labelled form still works for all.
    expect(names.resolve('shared', [a, b])).toBeUndefined();
    expect(names.resolve('alpha__greet', [a, b])).toEqual({ server: a, prompt: 'greet' });
    // A server no longer reached takes its kept names with it.
    expect(names.resolve('summarise', [a])).toBeUndefined();
    // A new listing forgets what the last one kept.
    names.name([
      { r: a, items: [{ name: 'greet' }] },
      { r: b, items: [{ name: 'greet' }] },
    ]);
    expect(names.resolve('greet', [a, b])).toBeUndefined();
    expect(names.knows('summarise')).toBe(false);
  });
});
