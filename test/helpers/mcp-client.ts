import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import type { CallToolResult, ClientOptions } from '@modelcontextprotocol/client';

/**
 * The official SDK client connected to a Gatehouse `/mcp` URL with `token` as bearer token;
 * `prepare` sets its handlers before it connects.
 */
export async function connectMcp(
  url: string,
  token: string,
  options?: ClientOptions,
  prepare?: (client: Client) => void,
): Promise<{ client: Client; transport: StreamableHTTPClientTransport }> {
  const transport = new StreamableHTTPClientTransport(new URL(url), {
    requestInit: { headers: { authorization: `Bearer ${token}` } },
  });
  const client = new Client({ name: 'gatehouse-e2e', version: '1.0.0' }, options);
  prepare?.(client);
  await client.connect(transport);
  return { client, transport };
}

/** The text of a result's first content block ('' when it is not text). */
export function text(r: CallToolResult): string {
  const first = r.content[0];
  return first?.type === 'text' ? first.text : '';
}

/**
 * The JSON-RPC answer of a raw `POST /mcp`: its JSON body, or the last `data:` of its event
 * stream (Gatehouse answers requests as event streams, so progress can precede the answer).
 */
export async function rpcAnswer(res: Response): Promise<unknown> {
  return parseRpc(await res.text(), res.headers.get('content-type') ?? undefined);
}

/** {@link rpcAnswer} of a body already read, given its content type. */
export function parseRpc(body: string, contentType: string | undefined): unknown {
  if (!contentType?.startsWith('text/event-stream')) return JSON.parse(body);
  const data = body
    .split('\n')
    .filter((l) => l.startsWith('data:') && l.length > 'data:'.length + 1)
    .map((l) => l.slice('data:'.length).trim());
  return JSON.parse(data[data.length - 1] ?? 'null');
}

/** One raw `POST /mcp` with a JSON-RPC message, as a stock client sends it, in a session or not. */
export type RawMcpPost = (body: unknown, sessionId?: string) => Promise<Response>;

/** {@link RawMcpPost} to `url` as bearer `token`. */
export function rawMcpPost(url: string, token: string): RawMcpPost {
  return (body, sessionId) =>
    fetch(url, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${token}`,
        accept: 'application/json, text/event-stream',
        'content-type': 'application/json',
        'mcp-protocol-version': '2025-11-25',
        ...(sessionId ? { 'mcp-session-id': sessionId } : {}),
      },
      body: JSON.stringify(body),
    });
}

/**
 * A session opened by hand (initialize with `capabilities`, then initialized), without a stream
 * yet: its id.
 * @throws Error when either step is not answered as the protocol says (200, then 202).
 */
export async function openRawSession(
  post: RawMcpPost,
  capabilities: Record<string, unknown> = {},
): Promise<string> {
  const init = await post({
    jsonrpc: '2.0',
    id: 1,
    method: 'initialize',
    params: {
      protocolVersion: '2025-11-25',
      capabilities,
      clientInfo: { name: 'raw', version: '1' },
    },
  });
  if (init.status !== 200) throw new Error(`initialize answered ${init.status}`);
  await init.text();
  const id = init.headers.get('mcp-session-id');
  if (id === null) throw new Error('initialize answered no Mcp-Session-Id');
  const done = await post({ jsonrpc: '2.0', method: 'notifications/initialized' }, id);
  if (done.status !== 202) throw new Error(`notifications/initialized answered ${done.status}`);
  return id;
}

/** Reads `reader` until a whole SSE event (comments left out) has come; returns its lines. */
export async function nextEvent(
  reader: ReadableStreamDefaultReader<Uint8Array>,
  buffered: { text: string } = { text: '' },
): Promise<string> {
  const decoder = new TextDecoder();
  for (;;) {
    const events = buffered.text.split('\n\n');
    while (events.length > 1) {
      const event = events.shift()!;
      buffered.text = events.join('\n\n');
      const lines = event
        .split('\n')
        .filter((l) => !l.startsWith(':'))
        .join('\n');
      if (lines !== '') return lines;
    }
    const { done, value } = await reader.read();
    if (done) throw new Error('stream ended before an event');
    buffered.text += decoder.decode(value, { stream: true });
  }
}

/** A session of `/mcp` spoken to by raw `fetch`, for what the SDK client hides (dropped streams). */
export interface RawMcpSession {
  url: string;
  token: string;
  sessionId: string;
}

/**
 * Posts `message` in the session and reads its answer stream up to the first event (the priming
 * one, for a 2025-11-25 client) only; returns that event, its id, and a way to drop the stream.
 */
export async function postThenDrop(
  s: RawMcpSession,
  message: unknown,
): Promise<{ status: number; first: string; lastEventId: string | undefined; drop: () => void }> {
  const dropped = new AbortController();
  const res = await fetch(s.url, {
    method: 'POST',
    signal: dropped.signal,
    headers: {
      ...sessionHeaders(s),
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
    },
    body: JSON.stringify(message),
  });
  const first = res.body ? await nextEvent(res.body.getReader()) : '';
  return {
    status: res.status,
    first,
    lastEventId: /^id: (\S+)$/m.exec(first)?.[1],
    drop: () => dropped.abort(),
  };
}

/** `GET /mcp` with `Last-Event-ID`: the replay of a dropped stream from after that event. */
export function resumeStream(s: RawMcpSession, lastEventId: string): Promise<Response> {
  return fetch(s.url, {
    headers: { ...sessionHeaders(s), accept: 'text/event-stream', 'last-event-id': lastEventId },
  });
}

function sessionHeaders(s: RawMcpSession): Record<string, string> {
  return {
    authorization: `Bearer ${s.token}`,
    'mcp-session-id': s.sessionId,
    'mcp-protocol-version': '2025-11-25',
  };
}
