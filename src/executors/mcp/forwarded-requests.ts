import { ProtocolError, ProtocolErrorCode } from '@modelcontextprotocol/client';
import { sha256Hex, utf8Prefix } from '../../core/index.js';
import { CallerRefusal } from '../../invocation/index.js';
import type { CallerInteraction, ExecutionRequest } from '../../invocation/index.js';
import type { ServerRequestHandler } from '../../mcp/index.js';

/** The bounds of the requests an upstream sends a call's caller (sampling, elicitation). */
export interface ForwardingBounds {
  /** Largest request, and largest answer, in bytes of JSON (default 64 KiB). */
  maxBytes: number;
  /** How long the caller has to answer one, within the call's own timeout (default 60 s). */
  timeoutMs: number;
  /** Requests forwarded per call at most (default 8). */
  maxPerCall: number;
  /** Bytes of a request or answer the trace keeps (default 4 KiB); a longer one as a digest. */
  recordBytes: number;
}

/** The defaults of {@link ForwardingBounds}. */
export const DEFAULT_FORWARDING: ForwardingBounds = {
  maxBytes: 64 * 1024,
  timeoutMs: 60_000,
  maxPerCall: 8,
  recordBytes: 4096,
};

/**
 * The handler of the requests the upstream sends while it serves this call: each is forwarded to
 * the call's caller (`caller.ask`, an MCP session's request related to the call) and its answer
 * relayed back, within the bounds; refused with a JSON-RPC error the upstream sees when the caller
 * has no session or cannot take it, when it is too large or one too many, or when the caller does
 * not answer in time. Each, and its answer or why there is none, is recorded in the call's trace.
 */
export function forwardRequests(
  req: ExecutionRequest,
  bounds: ForwardingBounds = DEFAULT_FORWARDING,
): ServerRequestHandler {
  let count = 0;
  return async (method, params, signal) => {
    const json = JSON.stringify(params);
    const seen: Omit<CallerInteraction, 'outcome'> = {
      method,
      at: new Date().toISOString(),
      request: kept(params, json, bounds.recordBytes),
    };
    const refuse = (code: number, message: string): ProtocolError => {
      req.onInteraction?.({ ...seen, outcome: 'refused', error: message });
      return new ProtocolError(code, message);
    };
    count += 1;
    if (count > bounds.maxPerCall)
      throw refuse(
        ProtocolErrorCode.InvalidRequest,
        `Gatehouse forwards at most ${bounds.maxPerCall} requests per tool call; ${method} is one too many.`,
      );
    const size = Buffer.byteLength(json);
    if (size > bounds.maxBytes)
      throw refuse(
        ProtocolErrorCode.InvalidParams,
        `${method} of ${size} bytes exceeds the ${bounds.maxBytes}-byte bound of requests Gatehouse forwards.`,
      );
    const ask = req.caller?.ask;
    if (!ask)
      throw refuse(
        ProtocolErrorCode.InvalidRequest,
        `The caller of this tool call has no MCP session to answer ${method} (a REST call, or one resumed after an approval).`,
      );
    let answer: Record<string, unknown>;
    try {
      answer = await ask(
        { method, params },
        { signal: AbortSignal.any([req.signal, signal]), timeoutMs: bounds.timeoutMs },
      );
    } catch (err) {
      if (err instanceof CallerRefusal) throw refuse(ProtocolErrorCode.InvalidRequest, err.message);
      const failed = callerFailure(method, err, bounds.timeoutMs);
      req.onInteraction?.({ ...seen, outcome: 'failed', error: failed.message });
      throw failed;
    }
    const answerJson = JSON.stringify(answer);
    const answerSize = Buffer.byteLength(answerJson);
    if (answerSize > bounds.maxBytes) {
      const message = `The caller's answer to ${method} (${answerSize} bytes) exceeds the ${bounds.maxBytes}-byte bound of answers Gatehouse relays.`;
      req.onInteraction?.({ ...seen, outcome: 'failed', error: message });
      throw new ProtocolError(ProtocolErrorCode.InternalError, message);
    }
    req.onInteraction?.({
      ...seen,
      outcome: 'answered',
      answer: kept(answer, answerJson, bounds.recordBytes),
    });
    return answer;
  };
}

/** A value as the trace keeps it: whole within `max` bytes, else its digest, size and a prefix. */
function kept(value: unknown, json: string, max: number): unknown {
  const bytes = Buffer.byteLength(json);
  if (bytes <= max) return value;
  return { truncated: true, bytes, sha256: sha256Hex(json), preview: utf8Prefix(json, max) };
}

/** The JSON-RPC error the upstream gets when the caller failed to answer. */
function callerFailure(method: string, err: unknown, timeoutMs: number): ProtocolError {
  const e = err as { code?: unknown; message?: unknown; name?: unknown };
  if (e.code === 'REQUEST_TIMEOUT' || e.name === 'TimeoutError')
    return new ProtocolError(
      ProtocolErrorCode.InternalError,
      `The caller did not answer ${method} within ${timeoutMs} ms.`,
    );
  const message = typeof e.message === 'string' ? e.message : String(err);
  const code = typeof e.code === 'number' ? e.code : ProtocolErrorCode.InternalError;
  return new ProtocolError(code, `The caller did not answer ${method}: ${message}`);
}
