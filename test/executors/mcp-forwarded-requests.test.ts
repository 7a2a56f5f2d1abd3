import { describe, expect, it } from 'vitest';
import { ProtocolError } from '@modelcontextprotocol/client';
import { forwardRequests } from '../../src/executors/mcp/forwarded-requests.js';
import type {
  CallerChannel,
  CallerInteraction,
  ExecutionRequest,
} from '../../src/invocation/index.js';

// The bounds of the requests an upstream sends a call's caller, with a fake caller (the real
// path, through the gateway to server-everything and the SDK client, is test/e2e/mcp-sampling).

const bounds = { maxBytes: 200, timeoutMs: 50, maxPerCall: 2, recordBytes: 40 };

function call(ask?: CallerChannel['ask']): {
  req: ExecutionRequest;
  seen: CallerInteraction[];
} {
  const seen: CallerInteraction[] = [];
  const req = {
    signal: new AbortController().signal,
    ...(ask ? { caller: { ask } } : {}),
    onInteraction: (i: CallerInteraction) => seen.push(i),
  } as unknown as ExecutionRequest;
  return { req, seen };
}

const never = new AbortController().signal;

describe('forwardRequests', () => {
  it('relays an answer, records a long one as digest and prefix, and bounds the count', async () => {
    const long = 'x'.repeat(100);
    const { req, seen } = call(() => Promise.resolve({ action: 'accept', content: { long } }));
    const forward = forwardRequests(req, bounds);
    await expect(forward('elicitation/create', { message: 'm' }, never)).resolves.toEqual({
      action: 'accept',
      content: { long },
    });
    expect(seen[0]).toMatchObject({
      outcome: 'answered',
      request: { message: 'm' },
      answer: { truncated: true, bytes: 141 },
    });
    expect((seen[0]!.answer as { sha256: string }).sha256).toMatch(/^[0-9a-f]{64}$/);
    await forward('elicitation/create', { message: 'm' }, never);
    const third = forward('elicitation/create', { message: 'm' }, never);
    await expect(third).rejects.toThrow(/at most 2 requests per tool call/);
    expect(seen.map((s) => s.outcome)).toEqual(['answered', 'answered', 'refused']);
  });

  it('refuses a request or answer over the size bound, and one without a session', async () => {
    const big = { message: 'y'.repeat(300) };
    const { req, seen } = call(() => Promise.resolve(big));
    const forward = forwardRequests(req, bounds);
    const tooBig = forward('sampling/createMessage', big, never);
    await expect(tooBig).rejects.toBeInstanceOf(ProtocolError);
    await expect(tooBig).rejects.toThrow(/exceeds the 200-byte bound of requests/);
    await expect(forward('sampling/createMessage', {}, never)).rejects.toThrow(
      /exceeds the 200-byte bound of answers/,
    );
    expect(seen.map((s) => s.outcome)).toEqual(['refused', 'failed']);
    const none = call();
    await expect(
      forwardRequests(none.req, bounds)('sampling/createMessage', {}, never),
    ).rejects.toThrow(/no MCP session/);
  });

  it('fails a request the caller does not answer in time, and relays its error', async () => {
    const slow = call(
      (_r, o) =>
        new Promise((_resolve, reject) =>
          setTimeout(
            () => reject(Object.assign(new Error('timed out'), { code: 'REQUEST_TIMEOUT' })),
            o.timeoutMs,
          ),
        ),
    );
    await expect(
      forwardRequests(slow.req, bounds)('sampling/createMessage', {}, never),
    ).rejects.toThrow(/did not answer sampling\/createMessage within 50 ms/);
    expect(slow.seen[0]).toMatchObject({ outcome: 'failed' });
    const rejecting = call(() => Promise.reject(new ProtocolError(-32001, 'user said no')));
    const err = await forwardRequests(rejecting.req, bounds)('elicitation/create', {}, never).catch(
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(ProtocolError);
    expect((err as ProtocolError).code).toBe(-32001);
    expect((err as ProtocolError).message).toMatch(/user said no/);
  });
});
