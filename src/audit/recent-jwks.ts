import type { JwkSet } from './jwks.js';
import type { Keyring } from './signing-keys.js';

/**
 * The keyring's public keys for `GET /v1/receipt-keys`, reloaded (another node may have rotated
 * the keys) at most once per `maxAgeMs` whatever the request rate: that route is public, so a
 * flood of it must not become a flood of database reads. Concurrent requests share one reload;
 * one that fails leaves the keys last loaded in use.
 */
export function recentJwks(
  keyring: Keyring,
  maxAgeMs: number,
  now: () => number = Date.now,
): () => Promise<JwkSet> {
  let reloaded = Number.NEGATIVE_INFINITY;
  let reloading: Promise<void> | null = null;
  return async () => {
    if (reloading === null && now() - reloaded >= maxAgeMs) {
      reloaded = now();
      reloading = keyring
        .refresh()
        .catch(() => undefined)
        .finally(() => (reloading = null));
    }
    if (reloading !== null) await reloading;
    return keyring.jwks();
  };
}
