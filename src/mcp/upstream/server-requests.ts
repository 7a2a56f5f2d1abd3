import { ProtocolError, ProtocolErrorCode } from '@modelcontextprotocol/client';
import type { Client, CreateMessageResult, ElicitResult } from '@modelcontextprotocol/client';

/** The requests an upstream server may send while it serves a call, forwarded to the caller. */
export const FORWARDED_METHODS = ['sampling/createMessage', 'elicitation/create'] as const;
/** One of {@link FORWARDED_METHODS}. */
export type ForwardedMethod = (typeof FORWARDED_METHODS)[number];

/**
 * The client capabilities the gateway declares to upstreams: it can forward these requests, and
 * elicitation in both modes (the SDK client refuses a mode it did not declare). A URL-mode request
 * reaches only an agent whose client declared `elicitation.url`; for others it is refused, saying
 * so, as is a sampling request for an agent that declared no sampling.
 */
export const FORWARDING_CAPABILITIES = { sampling: {}, elicitation: { form: {}, url: {} } };

/**
 * Answers a request the upstream sent while one call was in flight: forwards it to the call's
 * caller and returns the caller's answer. Throws a `ProtocolError` (sent to the upstream as the
 * JSON-RPC error) when it refuses or the caller fails.
 */
export type ServerRequestHandler = (
  method: ForwardedMethod,
  params: Record<string, unknown>,
  signal: AbortSignal,
) => Promise<Record<string, unknown>>;

/** A request in flight: a tool call (with its handler) or an agent's read, prompt, completion. */
interface InFlight {
  onRequest?: ServerRequestHandler;
}

/**
 * The tool calls in flight on one upstream connection, and the client's handlers of the requests
 * the server sends meanwhile (sampling, elicitation). The MCP client API does not say which of
 * its requests a server's request relates to (over stdio nothing can), so a request is forwarded
 * only when exactly one call is in flight: it is that call's. Otherwise it is refused, so no
 * caller ever sees a request another caller's call caused.
 */
export class CallsInFlight {
  private readonly calls = new Set<InFlight>();
  private redact: (params: unknown) => unknown = (p) => p;

  /**
   * Sets the request handlers on `client` (before it connects; see
   * {@link FORWARDING_CAPABILITIES}); what is forwarded is `redact`ed first (the connection's
   * credentials and known secret shapes never reach the caller).
   */
  install(client: Client, redact: (params: unknown) => unknown = (p) => p): void {
    this.redact = redact;
    client.setRequestHandler('sampling/createMessage', async (request, ctx) => {
      const answer = await this.route('sampling/createMessage', request.params, ctx.mcpReq.signal);
      return answer as CreateMessageResult;
    });
    client.setRequestHandler('elicitation/create', async (request, ctx) => {
      const answer = await this.route('elicitation/create', request.params, ctx.mcpReq.signal);
      return answer as ElicitResult;
    });
  }

  /**
   * Tracks one request until the returned function is called: a tool call with the handler of
   * its server requests, or (without) a request that takes none.
   */
  track(onRequest?: ServerRequestHandler): () => void {
    const call: InFlight = onRequest ? { onRequest } : {};
    this.calls.add(call);
    return () => this.calls.delete(call);
  }

  private route(
    method: ForwardedMethod,
    params: unknown,
    signal: AbortSignal,
  ): Promise<Record<string, unknown>> {
    const n = this.calls.size;
    if (n === 0)
      throw refused(
        `Gatehouse forwards ${method} only while a tool call is in flight on this connection, and none is.`,
      );
    if (n > 1)
      throw refused(
        `Gatehouse cannot tell which of the ${n} tool calls in flight on this connection sent ${method}; it forwards one only while a single call is in flight. Retry when the other calls are done.`,
      );
    const [call] = this.calls;
    if (!call?.onRequest)
      throw refused(
        `Gatehouse forwards ${method} only during a tool call; what is in flight on this connection is an agent's read, prompt or completion.`,
      );
    return call.onRequest(method, this.redact(params ?? {}) as Record<string, unknown>, signal);
  }
}

function refused(message: string): ProtocolError {
  return new ProtocolError(ProtocolErrorCode.InvalidRequest, message);
}
