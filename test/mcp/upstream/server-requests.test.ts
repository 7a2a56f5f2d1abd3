import { describe, expect, it } from 'vitest';
import type { Client } from '@modelcontextprotocol/client';
import { CallsInFlight } from '../../../src/mcp/upstream/server-requests.js';

// Which call an upstream's sampling or elicitation request goes to: the one call in flight on the
// connection, never a guess (the real path is test/e2e/mcp-sampling).

type Handler = (
  request: { params: unknown },
  ctx: { mcpReq: { signal: AbortSignal } },
) => Promise<unknown>;

function installed(): { calls: CallsInFlight; ask: (method: string) => Promise<unknown> } {
  const handlers = new Map<string, Handler>();
  const client = {
    setRequestHandler: (method: string, h: Handler) => handlers.set(method, h),
  } as unknown as Client;
  const calls = new CallsInFlight();
  calls.install(client, (p) => JSON.parse(JSON.stringify(p).replace('"q":1', '"q":"[redacted]"')));
  const signal = new AbortController().signal;
  return {
    calls,
    ask: async (method) => handlers.get(method)!({ params: { q: 1 } }, { mcpReq: { signal } }),
  };
}

describe('CallsInFlight', () => {
  it('forwards to the only call in flight, and refuses outside a call or among several', async () => {
    const { calls, ask } = installed();
    await expect(ask('sampling/createMessage')).rejects.toThrow(/none is/);
    const seen: unknown[] = [];
    const done = calls.track((method, params) => {
      seen.push([method, params]);
      return Promise.resolve({ ok: true });
    });
    await expect(ask('elicitation/create')).resolves.toEqual({ ok: true });
    // What the upstream sent, redacted (the connection's redactor in the gateway).
    expect(seen).toEqual([['elicitation/create', { q: '[redacted]' }]]);
    const other = calls.track();
    await expect(ask('sampling/createMessage')).rejects.toThrow(/which of the 2 tool calls/);
    done();
    // The one left is a read, which takes no server request.
    await expect(ask('sampling/createMessage')).rejects.toThrow(/only during a tool call/);
    other();
    await expect(ask('sampling/createMessage')).rejects.toThrow(/none is/);
    expect(seen).toHaveLength(1);
  });
});
