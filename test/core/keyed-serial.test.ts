import { describe, expect, it } from 'vitest';
import { KeyedSerial } from '../../src/core/index.js';

const tick = () => new Promise((r) => setTimeout(r, 5));

describe('KeyedSerial', () => {
  it('runs one operation at a time per key, in call order, past failures', async () => {
    const s = new KeyedSerial();
    const log: string[] = [];
    const op =
      (name: string, fail = false) =>
      async () => {
        log.push(`start ${name}`);
        await tick();
        log.push(`end ${name}`);
        if (fail) throw new Error(name);
        return name;
      };
    const a = s.run('k', op('a', true));
    const b = s.run('k', op('b'));
    const other = s.run('j', op('x'));
    await expect(a).rejects.toThrow('a');
    expect(await b).toBe('b');
    expect(await other).toBe('x');
    const onK = log.filter((l) => !l.endsWith('x'));
    expect(onK).toEqual(['start a', 'end a', 'start b', 'end b']);
    // Another key did not wait for k.
    expect(log.indexOf('start x')).toBeLessThan(log.indexOf('end a'));
  });

  it('holds an acquired turn until it is released, and then forgets the key', async () => {
    const s = new KeyedSerial();
    const release = await s.acquire('k');
    let ran = false;
    const next = s.run('k', () => {
      ran = true;
      return Promise.resolve();
    });
    await tick();
    expect(ran).toBe(false);
    release();
    release(); // harmless
    await next;
    expect(ran).toBe(true);
    expect((s as unknown as { tails: Map<string, unknown> }).tails.size).toBe(0);
  });
});
