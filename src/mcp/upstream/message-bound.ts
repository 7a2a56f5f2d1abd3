import type { FetchLike } from '@modelcontextprotocol/client';
import { LineOverBound } from './message-lines.js';

/**
 * An upstream sent one JSON-RPC message over the connection's bound. The SDK's transports hold a
 * whole message in memory before they parse it, so the bound is what keeps a hostile or broken
 * upstream from growing the gateway without limit; the connection is closed, since the message
 * cannot be skipped (stdio loses its framing; over HTTP the answer stream is cut mid-message).
 * `setting` names where the bound is set, for the message (the composition root knows it).
 */
export class MessageTooLarge extends Error {
  constructor(
    readonly maxBytes: number,
    setting?: string,
  ) {
    super(
      `the upstream sent a message over the ${maxBytes}-byte bound of one message from an upstream${setting ? ` (${setting})` : ''}; the connection was closed`,
    );
    this.name = 'MessageTooLarge';
  }
}

/** Whether a stdio transport's error is its message bound. */
export function isReadBufferOverflow(err: unknown): boolean {
  return err instanceof LineOverBound;
}

/**
 * `base` with each message of a response bounded to `maxBytes`: each event of an event stream
 * (bytes between blank lines), or the whole of any other body (one JSON-RPC message or batch).
 * Past the bound the body errors with {@link MessageTooLarge} (naming `setting`, where the bound
 * is set; the rest is not read) and `onOversize` is called, so the connection can be closed and
 * its calls told why.
 */
export function boundedFetch(
  base: FetchLike,
  maxBytes: number,
  onOversize: () => void,
  setting?: string,
): FetchLike {
  return async (url, init) => {
    const res = await base(url, init);
    if (!res.body) return res;
    const events = res.headers.get('content-type')?.includes('text/event-stream') === true;
    const body = res.body.pipeThrough(messageBound(events, maxBytes, onOversize, setting));
    return new Response(body, {
      status: res.status,
      statusText: res.statusText,
      headers: res.headers,
    });
  };
}

/** A pass-through that errors once one message (an SSE event, or the whole body) passes `max`. */
function messageBound(
  events: boolean,
  max: number,
  onOversize: () => void,
  setting: string | undefined,
): TransformStream<Uint8Array, Uint8Array> {
  let bytes = 0;
  /** Whether the current line has no bytes yet (a line end there ends the event). */
  let lineEmpty = true;
  /** Whether the last byte was CR (an LF after it ends the same line). */
  let afterCr = false;
  return new TransformStream({
    transform(chunk, controller) {
      if (!events) bytes += chunk.length;
      else
        for (let i = 0; i < chunk.length && bytes <= max; i++) {
          const b = chunk[i]!;
          if (b === 0x0a && afterCr) {
            afterCr = false;
            continue;
          }
          afterCr = b === 0x0d;
          if (b === 0x0a || b === 0x0d) {
            if (lineEmpty) bytes = 0;
            lineEmpty = true;
          } else {
            lineEmpty = false;
            bytes += 1;
          }
        }
      if (bytes > max) {
        onOversize();
        controller.error(new MessageTooLarge(max, setting));
        return;
      }
      controller.enqueue(chunk);
    },
  });
}
