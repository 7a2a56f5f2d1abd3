/**
 * Runs operations one at a time per key (the MCP service keys by server id, the tool registry by
 * tenant): an operation starts
 * once every earlier one on the same key has settled, whether it succeeded or failed. A key with
 * nothing pending holds no memory.
 */
export class KeyedSerial {
  private readonly tails = new Map<string, Promise<unknown>>();

  /** Runs `fn` after every earlier operation on `key` has finished; settles as `fn` does. */
  run<T>(key: string, fn: () => Promise<T>): Promise<T> {
    const prev = this.tails.get(key) ?? Promise.resolve();
    const run = prev.then(fn, fn);
    const tail = run.catch(() => undefined);
    this.tails.set(key, tail);
    void tail.then(() => {
      if (this.tails.get(key) === tail) this.tails.delete(key);
    });
    return run;
  }
}
