/**
 * Runs operations one at a time per key (the MCP service keys by server id, the tool registry by
 * tenant): an operation starts
 * once every earlier one on the same key has settled, whether it succeeded or failed. A key with
 * nothing pending holds no memory.
 */
export class KeyedSerial {
  private readonly tails = new Map<string, Promise<unknown>>();

  /** Runs `fn` after every earlier operation on `key` has finished; settles as `fn` does. */
  async run<T>(key: string, fn: () => Promise<T>): Promise<T> {
    const release = await this.acquire(key);
    try {
      return await fn();
    } finally {
      release();
    }
  }

  /**
   * Waits for the turn on `key` after every earlier operation, and holds it until the returned
   * function is called (for a turn that outlives one function call). Releasing twice is harmless.
   */
  async acquire(key: string): Promise<() => void> {
    const prev = this.tails.get(key) ?? Promise.resolve();
    let done!: () => void;
    const held = new Promise<void>((r) => (done = r));
    const tail = prev.then(() => held);
    this.tails.set(key, tail);
    await prev;
    return () => {
      done();
      if (this.tails.get(key) === tail) this.tails.delete(key);
    };
  }
}
