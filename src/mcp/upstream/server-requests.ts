import { AsyncLocalStorage } from 'node:async_hooks';
import { ProtocolError, ProtocolErrorCode } from '@modelcontextprotocol/client';
import type {
  Client,
  CreateMessageResult,
  ElicitResult,
  FetchLike,
} from '@modelcontextprotocol/client';
import { relatedRequests } from './related-requests.js';

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
 * the server sends meanwhile (sampling, elicitation). Over Streamable HTTP a server sends the
 * requests a call causes on that call's own answer stream: the connection's fetch is
 * {@link CallsInFlight.fetch}, which notes the id of each request on a call's stream, so such a
 * request goes to its call however many are in flight. Otherwise (stdio, where nothing says which
 * call a request belongs to, or a request on the server's GET stream) it is forwarded only when
 * exactly one call is in flight: it is that call's. Else it is refused, so no caller ever sees a
 * request another caller's call caused.
 */
export class CallsInFlight {
  private readonly calls = new Set<InFlight>();
  private redact: (params: unknown) => unknown = (p) => p;
  /** The request in flight whose code runs (a call's fetch of its POST runs within it). */
  private readonly current = new AsyncLocalStorage<InFlight>();
  /** Server requests that came on a request's answer stream, by their JSON-RPC id. */
  private readonly related = new Map<string, InFlight>();

  /**
   * Sets the request handlers on `client` (before it connects; see
   * {@link FORWARDING_CAPABILITIES}); what is forwarded is `redact`ed first (the connection's
   * credentials and known secret shapes never reach the caller).
   */
  install(client: Client, redact: (params: unknown) => unknown = (p) => p): void {
    this.redact = redact;
    client.setRequestHandler('sampling/createMessage', async (request, ctx) => {
      const answer = await this.route(
        'sampling/createMessage',
        request.params,
        ctx.mcpReq.signal,
        ctx.mcpReq.id,
      );
      return answer as CreateMessageResult;
    });
    client.setRequestHandler('elicitation/create', async (request, ctx) => {
      const answer = await this.route(
        'elicitation/create',
        request.params,
        ctx.mcpReq.signal,
        ctx.mcpReq.id,
      );
      return answer as ElicitResult;
    });
  }

  /**
   * Tracks one request until the returned function is called: a tool call with the handler of
   * its server requests, or (without) a request that takes none.
   */
  track(onRequest?: ServerRequestHandler): () => void {
    return this.begin(onRequest).done;
  }

  /** Runs `request` tracked (see {@link track}): what it sends is known to be its own. */
  async within<T>(
    onRequest: ServerRequestHandler | undefined,
    request: () => Promise<T>,
  ): Promise<T> {
    const { call, done } = this.begin(onRequest);
    try {
      return await this.current.run(call, request);
    } finally {
      done();
    }
  }

  /**
   * `base` as the Streamable HTTP transport's fetch: the answer stream of a POST sent within a
   * tracked request is read on its way to the client, and each server request on it noted as that
   * request's before the client handles it.
   */
  fetch(base: FetchLike): FetchLike {
    return async (url, init) => {
      const call = this.current.getStore();
      const res = await base(url, init);
      if (!call || init?.method !== 'POST' || !res.body) return res;
      if (!res.headers.get('content-type')?.includes('text/event-stream')) return res;
      const body = res.body.pipeThrough(
        relatedRequests((id) => {
          if (this.calls.has(call)) this.related.set(id, call);
        }),
      );
      return new Response(body, {
        status: res.status,
        statusText: res.statusText,
        headers: res.headers,
      });
    };
  }

  private begin(onRequest?: ServerRequestHandler): { call: InFlight; done: () => void } {
    const call: InFlight = onRequest ? { onRequest } : {};
    this.calls.add(call);
    return {
      call,
      done: () => {
        this.calls.delete(call);
        for (const [id, c] of this.related) if (c === call) this.related.delete(id);
      },
    };
  }

  private route(
    method: ForwardedMethod,
    params: unknown,
    signal: AbortSignal,
    requestId: string | number,
  ): Promise<Record<string, unknown>> {
    const related = this.related.get(String(requestId));
    this.related.delete(String(requestId));
    const n = this.calls.size;
    if (!related && n === 0)
      throw refused(
        `Gatehouse forwards ${method} only while a tool call is in flight on this connection, and none is.`,
      );
    if (!related && n > 1)
      throw refused(
        `Gatehouse cannot tell which of the ${n} tool calls in flight on this connection sent ${method} (it did not come on a call's own answer stream); it forwards one only while a single call is in flight. Retry when the other calls are done.`,
      );
    const call = related ?? [...this.calls][0];
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
