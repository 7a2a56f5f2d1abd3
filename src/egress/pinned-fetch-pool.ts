import { pinnedFetch } from './pinned-fetch.js';
import type { PinnedAddress, PinnedFetch } from './pinned-fetch.js';

/** Kept connections of an upstream unused this long are closed at the next take. */
const IDLE_MS = 30_000;
/** At most this many upstreams keep connections; the least recently used are closed first. */
const MAX_UPSTREAMS = 64;

interface Entry {
  fetch: PinnedFetch;
  lastUsed: number;
}

/**
 * Pinned fetches kept alive between calls, one per upstream origin and set of checked addresses,
 * so a request after an identical egress decision reuses a connection instead of opening one (a
 * fresh loopback connection cost ~9 ms against ~1 ms reused). Each take still follows its own
 * decision: a different address answer is a different entry, never another's connection. Bounded
 * by count and idle time.
 */
export class PinnedFetchPool {
  private readonly entries = new Map<string, Entry>();
  private closed = false;

  /**
   * The kept fetch of this origin and these addresses, made when absent. Its `close()` keeps the
   * connections for the next take; {@link close} ends them all.
   */
  take(origin: URL, addresses: readonly PinnedAddress[], ca?: string | Buffer): PinnedFetch {
    if (this.closed) throw new TypeError('fetch refused: the gateway egress is closed');
    const now = Date.now();
    this.evictIdle(now);
    const key = `${origin.origin} ${addresses.map((a) => a.address).join(',')}`;
    let entry = this.entries.get(key);
    if (entry) this.entries.delete(key);
    else
      entry = {
        fetch: pinnedFetch({ origin, addresses, ...(ca === undefined ? {} : { ca }) }),
        lastUsed: now,
      };
    entry.lastUsed = now;
    this.entries.set(key, entry);
    while (this.entries.size > MAX_UPSTREAMS) {
      const [oldest, first] = this.entries.entries().next().value!;
      first.fetch.close();
      this.entries.delete(oldest);
    }
    const kept = entry.fetch;
    return { fetch: kept.fetch, close: () => undefined };
  }

  /** Ends every kept connection; later takes are refused. Safe to repeat. */
  close(): void {
    this.closed = true;
    for (const entry of this.entries.values()) entry.fetch.close();
    this.entries.clear();
  }

  private evictIdle(now: number): void {
    for (const [key, entry] of this.entries) {
      if (now - entry.lastUsed < IDLE_MS) break;
      entry.fetch.close();
      this.entries.delete(key);
    }
  }
}
