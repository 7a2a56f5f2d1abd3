import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import type { CallToolResult } from '@modelcontextprotocol/client';

/** The official SDK client connected to a Gatehouse `/mcp` URL with `token` as bearer token. */
export async function connectMcp(
  url: string,
  token: string,
): Promise<{ client: Client; transport: StreamableHTTPClientTransport }> {
  const transport = new StreamableHTTPClientTransport(new URL(url), {
    requestInit: { headers: { authorization: `Bearer ${token}` } },
  });
  const client = new Client({ name: 'gatehouse-e2e', version: '1.0.0' });
  await client.connect(transport);
  return { client, transport };
}

/** The text of a result's first content block ('' when it is not text). */
export function text(r: CallToolResult): string {
  const first = r.content[0];
  return first?.type === 'text' ? first.text : '';
}
