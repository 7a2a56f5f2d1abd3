import type { FastifyReply } from 'fastify';

/**
 * Serves a session's standalone event stream (the answer to `GET /mcp`) on `reply`, taken over:
 * what the session sends is read as it comes and written to the socket, so the gateway holds no
 * more than `bufferBytes` for a reader that does not keep up; one further behind is closed (it
 * opens the stream again; notifications meanwhile are lost, as MCP allows). Resolves when the
 * stream ends: the session or its token ended, the client left, or it was closed as too slow.
 */
export async function serveSessionStream(
  reply: FastifyReply,
  answer: Response,
  bufferBytes: number,
  onBehind: () => void,
): Promise<void> {
  const res = reply.raw;
  const reader = answer.body!.getReader();
  reply.hijack();
  const headers: Record<string, string> = {};
  answer.headers.forEach((value, name) => (headers[name] = value));
  res.writeHead(answer.status, headers);
  // Flushes the headers: a client sees the stream open before the first notification.
  res.write(': stream open\n\n');
  res.on('close', () => void reader.cancel().catch(() => undefined));
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done || res.destroyed) break;
      const waiting = res.writableLength;
      if (waiting > 0 && waiting + value.byteLength > bufferBytes) {
        onBehind();
        res.destroy();
        await reader.cancel().catch(() => undefined);
        return;
      }
      res.write(value);
    }
    if (!res.destroyed) res.end();
  } catch {
    res.destroy();
  }
}
