import { useEffect, useState } from 'preact/hooks';

/**
 * The gateway's clock as this browser can know it, from the `Date` header of the API's answers: an
 * age ("3 min ago") or an expiry ("in 4 min") is the gateway's time against the gateway's time,
 * even when the browser's clock is minutes off.
 *
 * A `Date` header is whole seconds, stamped somewhere between the request leaving and the answer
 * arriving, so each answer bounds the offset (gateway minus browser) to an interval:
 * `[date − received, date + 1 s − sent]`. The estimate is the middle of the intersection of every
 * answer's interval; an answer whose interval misses it (either clock was stepped) starts over.
 */
export class ServerClock {
  private low = -Infinity;
  private high = Infinity;

  /**
   * Learns from one answer: its `Date` header (null when absent or unreadable: ignored) and the
   * browser's times (ms since the epoch) when the request was sent and the answer received.
   */
  observe(date: string | null, sent: number, received: number): void {
    const at = date === null ? NaN : Date.parse(date);
    if (!Number.isFinite(at) || !(received >= sent)) return;
    const low = at - received;
    const high = at + 1000 - sent;
    if (low > this.high || high < this.low) {
      this.low = low;
      this.high = high;
      return;
    }
    this.low = Math.max(this.low, low);
    this.high = Math.min(this.high, high);
  }

  /** The gateway's clock minus the browser's, in ms (0 before any answer). */
  offset(): number {
    if (!Number.isFinite(this.low)) return 0;
    return Math.round((this.low + this.high) / 2);
  }

  /** How far the offset may be off, in ms (Infinity before any answer). */
  uncertainty(): number {
    return (this.high - this.low) / 2;
  }

  /** The gateway's time now (ms since the epoch), by the browser's clock `local`. */
  now(local: number = Date.now()): number {
    return local + this.offset();
  }
}

/** The clock every answer of the API (api.ts) teaches. */
export const serverClock = new ServerClock();

/**
 * The gateway's time now, for relative times; re-rendered every 15 s so ages and expiries stay
 * true on a page left open.
 */
export function useServerNow(): number {
  const [, setTick] = useState(0);
  useEffect(() => {
    const t = setInterval(() => setTick((n) => n + 1), 15_000);
    return () => clearInterval(t);
  }, []);
  return serverClock.now();
}
