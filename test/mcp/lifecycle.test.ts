import { describe, expect, it } from 'vitest';
import { IllegalStateError } from '../../src/core/index.js';
import {
  McpServerState,
  canTransitionMcpServer,
  diffTool,
  serverIdentity,
  toolDigest,
  transitionMcpServer,
} from '../../src/mcp/index.js';

describe('MCP server lifecycle', () => {
  it('allows exactly the moves of the table', () => {
    const allowed = Object.values(McpServerState).flatMap((from) =>
      Object.values(McpServerState)
        .filter((to) => canTransitionMcpServer(from, to))
        .map((to) => `${from}→${to}`),
    );
    expect(allowed.sort()).toEqual(
      [
        'registered→verified',
        'registered→retired',
        'verified→active',
        'verified→retired',
        'active→degraded',
        'active→retired',
        'degraded→active',
        'degraded→retired',
      ].sort(),
    );
    expect(() => transitionMcpServer('retired', 'active')).toThrow(IllegalStateError);
  });
});

describe('tool digest and identity', () => {
  const tool = { name: 'echo', description: 'Echoes.', inputSchema: { type: 'object' } };

  it('covers every digested field, and omits absent ones', () => {
    expect(toolDigest(tool)).toMatch(/^[0-9a-f]{64}$/);
    expect(toolDigest({ ...tool, title: undefined })).toBe(toolDigest(tool));
    for (const change of [
      { description: 'Echoes!' },
      { title: 'Echo' },
      { inputSchema: { type: 'object', properties: {} } },
      { outputSchema: { type: 'object' } },
      { annotations: { readOnlyHint: true } },
    ]) {
      expect(toolDigest({ ...tool, ...change })).not.toBe(toolDigest(tool));
    }
    // Key order does not matter (JCS).
    expect(
      toolDigest({ inputSchema: { type: 'object' }, name: 'echo', description: 'Echoes.' }),
    ).toBe(toolDigest(tool));
  });

  it('diffs the changed fields with old and new values', () => {
    expect(diffTool(tool, { ...tool, annotations: { readOnlyHint: false } })).toEqual([
      { field: 'annotations', old: undefined, new: { readOnlyHint: false } },
    ]);
  });

  it('names a server by transport, command and arguments or URL', () => {
    const a = serverIdentity({ type: 'stdio', command: 'npx', args: ['pkg@1.0.0'] });
    expect(
      serverIdentity({ type: 'stdio', command: 'npx', args: ['pkg@1.0.0'], env: { A: 'b' } }),
    ).toBe(a);
    expect(serverIdentity({ type: 'stdio', command: 'npx', args: ['pkg@1.0.1'] })).not.toBe(a);
    expect(serverIdentity({ type: 'http', url: 'http://h/mcp' })).toBe(
      serverIdentity({ type: 'http', url: 'HTTP://h/mcp' }),
    );
  });
});
