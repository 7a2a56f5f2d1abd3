import { describe, expect, it } from 'vitest';
import { recentJwks } from '../../src/audit/index.js';
import type { JwkSet, Keyring } from '../../src/audit/index.js';

/** A keyring whose reloads are counted, each one giving the keys `next` holds then. */
function countingKeyring(fail = false) {
  const state = { reloads: 0, next: ['k1'], loaded: ['k1'] };
  const keyring = {
    refresh: async () => {
      state.reloads += 1;
      await new Promise((ok) => setTimeout(ok, 5));
      if (fail) throw new Error('database gone');
      state.loaded = [...state.next];
    },
    jwks: (): JwkSet => ({ keys: state.loaded.map((kid) => ({ kid }) as JwkSet['keys'][number]) }),
  } as unknown as Keyring;
  return { keyring, state };
}

const kids = (s: JwkSet) => s.keys.map((k) => k.kid);

describe('the receipt keys a public route serves', () => {
  it('reloads once for a burst of requests, and again only after maxAgeMs', async () => {
    const { keyring, state } = countingKeyring();
    let now = 0;
    const jwks = recentJwks(keyring, 1000, () => now);
    const burst = await Promise.all(Array.from({ length: 200 }, () => jwks()));
    expect(state.reloads).toBe(1);
    expect(burst.every((s) => kids(s).join() === 'k1')).toBe(true);

    // Another node rotates: within the second the old set is served without a reload…
    state.next = ['k1', 'k2'];
    now = 999;
    expect(kids(await jwks())).toEqual(['k1']);
    expect(state.reloads).toBe(1);
    // …and the request after it waits for a reload and gets the new key.
    now = 1000;
    expect(kids(await jwks())).toEqual(['k1', 'k2']);
    expect(state.reloads).toBe(2);
  });

  it('serves the keys last loaded when a reload fails', async () => {
    const { keyring, state } = countingKeyring(true);
    const jwks = recentJwks(keyring, 1000, () => 0);
    expect(kids(await jwks())).toEqual(['k1']);
    expect(state.reloads).toBe(1);
  });
});
