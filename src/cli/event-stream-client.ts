/** One server-sent event from `GET /v1/events/stream`. */
interface StreamEvent {
  id: number;
  type: string;
  subject: string;
  at: string;
  data: Record<string, unknown>;
}

/**
 * Opens the gateway's event stream and resolves once the gateway answered, so every event from
 * then on is in what it yields: a caller that reads a state after this resolves misses no change
 * made after that read. With `lastEventId` the stream resumes after that event (the gateway
 * replays what came since). Yields events as they arrive, until `signal` aborts or the gateway
 * ends the stream.
 * @throws Error when the stream cannot be opened.
 */
export async function openEventStream(
  baseUrl: string,
  token: string | undefined,
  signal: AbortSignal,
  lastEventId?: number,
): Promise<AsyncGenerator<StreamEvent>> {
  const res = await fetch(new URL('/v1/events/stream', baseUrl), {
    headers: {
      accept: 'text/event-stream',
      ...(token ? { authorization: `Bearer ${token}` } : {}),
      ...(lastEventId === undefined ? {} : { 'last-event-id': String(lastEventId) }),
    },
    signal,
  });
  if (!res.ok || !res.body)
    throw new Error(`cannot follow events: HTTP ${res.status} ${await res.text()}`);
  return frames(res.body);
}

async function* frames(body: ReadableStream<Uint8Array>): AsyncGenerator<StreamEvent> {
  const decoder = new TextDecoder();
  let buffer = '';
  for await (const chunk of body) {
    buffer += decoder.decode(chunk, { stream: true });
    let end: number;
    while ((end = buffer.indexOf('\n\n')) >= 0) {
      const frame = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      const data = frame
        .split('\n')
        .filter((l) => l.startsWith('data: '))
        .map((l) => l.slice(6))
        .join('\n');
      if (data !== '') yield JSON.parse(data) as StreamEvent;
    }
  }
}
