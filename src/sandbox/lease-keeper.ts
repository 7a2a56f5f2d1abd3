/** How a {@link LeaseKeeper} tells whether what it keeps still runs, and how it ends it. */
export interface KeeperOps<T> {
  /** What is kept, for messages ("browser", "desktop"). */
  what: string;
  /** False once it died (then the next `get` starts another). */
  running(value: T): boolean;
  /** Ends it and everything of it (processes, cgroup, sockets). Must be safe twice. */
  close(value: T): Promise<void>;
}

interface Entry<T> {
  leaseId: string;
  value: Promise<T>;
}

/**
 * What a lease keeps running between its calls — one per lease and tool (say a warm browser or a
 * desktop of an attempt's lease) — so the calls of one attempt see one of it: the first call
 * starts it, later calls get it back while it runs, one that died is closed and replaced, and it
 * is closed when the lease ends or the keeper closes.
 */
export class LeaseKeeper<T> {
  private readonly open = new Map<string, Entry<T>>();
  private made = 0;
  private closed = false;

  constructor(private readonly ops: KeeperOps<T>) {}

  /**
   * The running one of `leaseId` for `tool`, or a new one from `start` (given a number unique in
   * this keeper, for its ids); `fresh` says which.
   * @throws Error when the keeper is closed, or what `start` throws (the entry is then dropped;
   *   `start` must leave nothing behind when it fails).
   */
  async get(
    leaseId: string,
    tool: string,
    start: (n: number) => Promise<T>,
  ): Promise<{ value: T; fresh: boolean }> {
    if (this.closed) throw new Error(`the gateway is closing; no ${this.ops.what} starts`);
    const key = `${leaseId}\u0000${tool}`;
    const known = this.open.get(key);
    if (known) {
      const value = await known.value.catch(() => null);
      if (value !== null && this.ops.running(value)) return { value, fresh: false };
      if (this.open.get(key) === known) this.open.delete(key);
      await this.end(known);
    }
    this.made += 1;
    const starting = start(this.made);
    const entry = { leaseId, value: starting };
    this.open.set(key, entry);
    try {
      return { value: await starting, fresh: true };
    } catch (err) {
      if (this.open.get(key) === entry) this.open.delete(key);
      throw err;
    }
  }

  /** Closes what a lease that ended (released or reaped) kept. */
  async endLease(leaseId: string): Promise<void> {
    const ending = [...this.open].filter(([, e]) => e.leaseId === leaseId);
    for (const [key] of ending) this.open.delete(key);
    await Promise.all(ending.map(([, e]) => this.end(e)));
  }

  /** Closes everything kept; nothing starts after. Safe twice. */
  async close(): Promise<void> {
    this.closed = true;
    const all = [...this.open.values()];
    this.open.clear();
    await Promise.all(all.map((e) => this.end(e)));
  }

  private async end(entry: Entry<T>): Promise<void> {
    const value = await entry.value.catch(() => null);
    if (value !== null) await this.ops.close(value);
  }
}
