/** One server-sent event with data (comments and `retry:` lines are not frames). */
export interface SseFrame {
  /** The `id:` field, as a number. */
  id: number;
  event: string;
  data: { id: number; type: string; subject: string; at: string; data: Record<string, unknown> };
}

/** Options of {@link SseClient.connect}. */
export interface SseConnectOptions {
  /** Sent as the `Last-Event-ID` header. */
  lastEventId?: number;
  /** Query string appended to the URL, e.g. `after=0`. */
  query?: string;
}

/**
 * A client of `GET /v1/events/stream` over a real socket: it reads frames in the background and
 * hands them out in order.
 */
export class SseClient {
  private readonly frames: SseFrame[] = [];
  private wake: (() => void) | undefined;
  private ended = false;
  private failure: unknown;

  private constructor(
    readonly status: number,
    private readonly controller: AbortController,
  ) {}

  /** Opens the stream and resolves once its headers arrived. */
  static async connect(base: string, token: string, o: SseConnectOptions = {}): Promise<SseClient> {
    const controller = new AbortController();
    const headers: Record<string, string> = {
      authorization: `Bearer ${token}`,
      accept: 'text/event-stream',
    };
    if (o.lastEventId !== undefined) headers['last-event-id'] = String(o.lastEventId);
    const url = `${base}/v1/events/stream${o.query ? `?${o.query}` : ''}`;
    const res = await fetch(url, { headers, signal: controller.signal });
    const client = new SseClient(res.status, controller);
    if (res.body) void client.read(res.body);
    else client.ended = true;
    return client;
  }

  private async read(body: ReadableStream<Uint8Array>): Promise<void> {
    const decoder = new TextDecoder();
    let buffer = '';
    try {
      for await (const chunk of body) {
        buffer += decoder.decode(chunk, { stream: true });
        let end: number;
        while ((end = buffer.indexOf('\n\n')) >= 0) {
          const block = buffer.slice(0, end);
          buffer = buffer.slice(end + 2);
          const frame = parse(block);
          if (frame) this.frames.push(frame);
        }
        this.notify();
      }
    } catch (err) {
      if (!this.controller.signal.aborted) this.failure = err;
    } finally {
      this.ended = true;
      this.notify();
    }
  }

  private notify(): void {
    const w = this.wake;
    this.wake = undefined;
    w?.();
  }

  /** Frames received and not yet taken. */
  get buffered(): number {
    return this.frames.length;
  }

  /**
   * The next `n` frames, waiting up to `timeoutMs` for them.
   * @throws Error naming what arrived when they do not all arrive in time.
   */
  async take(n: number, timeoutMs = 5_000): Promise<SseFrame[]> {
    const deadline = Date.now() + timeoutMs;
    while (this.frames.length < n) {
      if (this.failure) throw this.failure as Error;
      const left = deadline - Date.now();
      if (this.ended || left <= 0) {
        throw new Error(
          `expected ${n} events, got ${this.frames.length}${this.ended ? ' (stream ended)' : ''}: ${this.frames.map((f) => `${f.id}:${f.event}`).join(', ')}`,
        );
      }
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, left);
        this.wake = () => {
          clearTimeout(timer);
          resolve();
        };
      });
    }
    return this.frames.splice(0, n);
  }

  /** Waits `ms` and returns every frame received meanwhile (to show that nothing more came). */
  async drain(ms: number): Promise<SseFrame[]> {
    await new Promise((resolve) => setTimeout(resolve, ms));
    return this.frames.splice(0);
  }

  /**
   * Waits until the server ends the stream, for at most `timeoutMs`.
   * @returns true when it ended, false when it was still open at the deadline.
   */
  async endedWithin(timeoutMs: number): Promise<boolean> {
    const deadline = Date.now() + timeoutMs;
    while (!this.ended) {
      const left = deadline - Date.now();
      if (left <= 0) return false;
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, left);
        this.wake = () => {
          clearTimeout(timer);
          resolve();
        };
      });
    }
    return true;
  }

  /** Disconnects. Safe to call twice. */
  close(): void {
    this.controller.abort();
  }
}

function parse(block: string): SseFrame | undefined {
  let id: number | undefined;
  let event = 'message';
  const data: string[] = [];
  for (const line of block.split('\n')) {
    if (line === '' || line.startsWith(':')) continue;
    const colon = line.indexOf(':');
    const field = colon < 0 ? line : line.slice(0, colon);
    const value = colon < 0 ? '' : line.slice(colon + 1).replace(/^ /, '');
    if (field === 'id') id = Number(value);
    else if (field === 'event') event = value;
    else if (field === 'data') data.push(value);
  }
  if (data.length === 0) return undefined;
  if (id === undefined || !Number.isInteger(id))
    throw new Error(`event without a numeric id: ${block}`);
  return { id, event, data: JSON.parse(data.join('\n')) as SseFrame['data'] };
}
