import { describe, expect, it } from 'vitest';
import type { McpStreamEventStore, McpStreamLimits } from '../../src/tenancy/index.js';

/**
 * The contract every {@link McpStreamEventStore} keeps. `make` gives a fresh, empty store with
 * `limits`, whose clock is `now`.
 */
export function mcpStreamEventStoreContract(
  name: string,
  make: (
    limits: McpStreamLimits,
    now: () => number,
  ) => Promise<{ store: McpStreamEventStore; close(): Promise<void> }>,
): void {
  describe(`${name} (McpStreamEventStore contract)`, () => {
    let clock = 1_000_000;
    const limits: McpStreamLimits = { events: 3, bytes: 200, ttlMs: 60_000 };
    const withStore = async (body: (store: McpStreamEventStore) => Promise<void>) => {
      const made = await make(limits, () => clock);
      try {
        await body(made.store);
      } finally {
        await made.close();
      }
    };

    it('replays the later events of the same stream of the same session, and forgets a dropped session', () =>
      withStore(async (store) => {
        const a1 = await store.append('s1', 'post-1', '{}');
        const b1 = await store.append('s1', 'post-2', '{"n":"b1"}');
        const a2 = await store.append('s1', 'post-1', '{"n":"a2"}');
        expect(Number(a2)).toBeGreaterThan(Number(b1));
        expect(await store.streamOf('s1', a1)).toBe('post-1');
        expect(await store.after('s1', a1)).toEqual([
          { id: a2, streamId: 'post-1', message: '{"n":"a2"}' },
        ]);
        // Another session's id, or a guess, finds nothing.
        expect(await store.streamOf('s2', a1)).toBeUndefined();
        expect(await store.after('s2', a1)).toEqual([]);
        expect(await store.streamOf('s1', 'no-such-event')).toBeUndefined();
        await store.drop('s1');
        expect(await store.streamOf('s1', b1)).toBeUndefined();
      }));

    it('keeps each session within its count and bytes, and lets events expire', () =>
      withStore(async (store) => {
        const ids: string[] = [];
        for (let i = 0; i < 4; i++) ids.push(await store.append('s1', 'p', `{"i":${i}}`));
        const other = await store.append('s2', 'p', '{}');
        // The fourth event pushed the first out; the other session kept its own.
        expect(await store.streamOf('s1', ids[0]!)).toBeUndefined();
        expect((await store.after('s1', ids[1]!)).map((e) => e.id)).toEqual(ids.slice(2));
        expect(await store.streamOf('s2', other)).toBe('p');
        // A large event pushes out older ones until the session is within its bytes.
        const big = await store.append('s1', 'p', JSON.stringify({ pad: 'x'.repeat(180) }));
        expect(await store.streamOf('s1', ids[2]!)).toBeUndefined();
        expect(await store.streamOf('s1', big)).toBe('p');
        clock += limits.ttlMs + 1;
        expect(await store.streamOf('s1', big)).toBeUndefined();
        expect(await store.streamOf('s2', other)).toBeUndefined();
      }));
  });
}
