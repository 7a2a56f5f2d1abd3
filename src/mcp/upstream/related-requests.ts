/** The most of one event the watcher holds while it waits for the event's end. */
const MAX_EVENT_BYTES = 4 * 1024 * 1024;

/**
 * A pass-through of an SSE answer stream that calls `onRequest` with the JSON-RPC id of each
 * request (a message with `method` and `id`) on it, before the bytes that end that event go on:
 * so the id is known before the reader downstream (the SDK client) handles the request. The bytes
 * pass unchanged. An event longer than 4 MiB is not read (its request is then simply not noted).
 */
export function relatedRequests(
  onRequest: (id: string) => void,
): TransformStream<Uint8Array, Uint8Array> {
  const decoder = new TextDecoder();
  let buffered = '';
  let skipping = false;
  return new TransformStream({
    transform(chunk, controller) {
      buffered += decoder.decode(chunk, { stream: true }).replace(/\r\n?/g, '\n');
      for (let cut = buffered.indexOf('\n\n'); cut >= 0; cut = buffered.indexOf('\n\n')) {
        const event = buffered.slice(0, cut);
        buffered = buffered.slice(cut + 2);
        if (skipping) skipping = false;
        else noteRequest(event, onRequest);
      }
      if (buffered.length > MAX_EVENT_BYTES) {
        buffered = '';
        skipping = true;
      }
      controller.enqueue(chunk);
    },
  });
}

function noteRequest(event: string, onRequest: (id: string) => void): void {
  const data = event
    .split('\n')
    .filter((l) => l.startsWith('data:'))
    .map((l) => l.slice(l.startsWith('data: ') ? 6 : 5))
    .join('\n');
  if (data === '') return;
  try {
    const m = JSON.parse(data) as { method?: unknown; id?: unknown };
    if (typeof m.method === 'string' && (typeof m.id === 'string' || typeof m.id === 'number'))
      onRequest(String(m.id));
  } catch {
    // Not JSON: the client reports it; nothing to note.
  }
}
