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
