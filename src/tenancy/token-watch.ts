import type { Clock } from '../core/index.js';

/** The longest a Node.js timer can wait; a later end is re-checked when it fires. */
const MAX_TIMER_MS = 2 ** 31 - 1;

interface Watched {
  listeners: Set<() => void>;
  /** When the token stops working, in ms; re-armed when a revocation moves it. */
  end: number;
  timer: NodeJS.Timeout | null;
}

/**
 * Tells what holds a token open (an event stream, an MCP session) when the token stops working:
 * at its expiry, at once when it is revoked, at the end of a rotation's overlap. One timer per
 * watched token, armed only while something watches it; nothing is polled per request.
 */
export class TokenWatch {
  private readonly watched = new Map<string, Watched>();

  constructor(private readonly clock: Clock) {}

  /**
   * Calls `listener` once when token `id` stops working at `end` (ms), or when {@link moved}
   * says it ended sooner. An `end` already past calls it on the next turn.
   * @returns the unsubscribe; safe to call twice.
   */
  watch(id: string, end: number, listener: () => void): () => void {
    let w = this.watched.get(id);
    if (!w) {
      w = { listeners: new Set(), end, timer: null };
      this.watched.set(id, w);
      this.arm(id, w);
    }
    const once = () => {
      w.listeners.delete(once);
      listener();
    };
    w.listeners.add(once);
    return () => {
      w.listeners.delete(once);
      if (w.listeners.size === 0) this.forget(id, w);
    };
  }

  /** Token `id` now ends at `end` (ms): revoked, or rotated with an overlap. */
  moved(id: string, end: number): void {
    const w = this.watched.get(id);
    if (!w) return;
    w.end = end;
    this.arm(id, w);
  }

  /** Ends every watch (the gateway is closing) without calling the listeners. */
  close(): void {
    for (const [id, w] of this.watched) this.forget(id, w);
  }

  private arm(id: string, w: Watched): void {
    if (w.timer) clearTimeout(w.timer);
    const wait = Math.max(0, w.end - this.clock.now());
    w.timer = setTimeout(() => this.fire(id, w), Math.min(wait, MAX_TIMER_MS));
    w.timer.unref();
  }

  private fire(id: string, w: Watched): void {
    w.timer = null;
    if (w.end > this.clock.now()) return this.arm(id, w);
    this.forget(id, w);
    for (const listener of [...w.listeners]) listener();
  }

  private forget(id: string, w: Watched): void {
    if (w.timer) clearTimeout(w.timer);
    w.timer = null;
    if (this.watched.get(id) === w) this.watched.delete(id);
  }
}
