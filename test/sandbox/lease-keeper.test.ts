import { describe, expect, it } from 'vitest';
import { LeaseKeeper } from '../../src/sandbox/index.js';

/** A stand-in for a kept process: running until closed or killed. */
class Thing {
  alive = true;
  closes = 0;
  constructor(readonly n: number) {}
  close(): Promise<void> {
    this.alive = false;
    this.closes += 1;
    return Promise.resolve();
  }
}

const keeper = () =>
  new LeaseKeeper<Thing>({ what: 'thing', running: (t) => t.alive, close: (t) => t.close() });
const start = (n: number) => Promise.resolve(new Thing(n));

describe('a keeper of what a lease keeps between its calls', () => {
  it('starts one per lease and tool, gives it back while it runs, and replaces (and closes) a dead one', async () => {
    const k = keeper();
    const a = await k.get('lease-1', 'tool@1', start);
    expect(a).toMatchObject({ fresh: true, value: { n: 1 } });
    expect(await k.get('lease-1', 'tool@1', start)).toEqual({ value: a.value, fresh: false });
    expect((await k.get('lease-1', 'other@1', start)).value.n).toBe(2);
    expect((await k.get('lease-2', 'tool@1', start)).value.n).toBe(3);

    a.value.alive = false;
    const b = await k.get('lease-1', 'tool@1', start);
    expect(b).toMatchObject({ fresh: true, value: { n: 4 } });
    expect(a.value.closes).toBe(1);
  });

  it('starts one only once for concurrent calls, and forgets one that failed to start', async () => {
    const k = keeper();
    const [x, y] = await Promise.all([k.get('lease-1', 't', start), k.get('lease-1', 't', start)]);
    expect(x.value).toBe(y.value);
    expect([x.fresh, y.fresh].sort()).toEqual([false, true]);

    await expect(
      k.get('lease-2', 't', () => Promise.reject(new Error('no display'))),
    ).rejects.toThrow('no display');
    expect(await k.get('lease-2', 't', start)).toMatchObject({ fresh: true });
  });

  it("closes a lease's own when it ends, and everything when the keeper closes; nothing starts after", async () => {
    const k = keeper();
    const one = (await k.get('lease-1', 't', start)).value;
    const two = (await k.get('lease-2', 't', start)).value;
    await k.endLease('lease-1');
    expect([one.closes, two.closes]).toEqual([1, 0]);
    expect((await k.get('lease-1', 't', start)).fresh).toBe(true);
    await k.close();
    expect(two.closes).toBe(1);
    await expect(k.get('lease-3', 't', start)).rejects.toThrow(
      'the gateway is closing; no thing starts',
    );
  });
});
