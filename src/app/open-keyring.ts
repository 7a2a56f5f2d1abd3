import { join } from 'node:path';
import { SharedSigningKeyring, SigningKeyring } from '../audit/index.js';
import type { KeySealer, Keyring } from '../audit/index.js';
import type { Clock } from '../core/index.js';
import type { SecretCipher } from '../secrets/index.js';
import type { GatewayConfig } from './config.js';
import type { Storage } from './open-storage.js';

/**
 * The keys that sign receipts and checkpoints: on PostgreSQL those of the database, shared by
 * every node and sealed under the master key (`cipher`); on SQLite those of `DATA/keys`.
 * @throws GatehouseError INVALID_INPUT when the database's keys do not open with this master key.
 */
export async function openKeyring(options: {
  config: Pick<GatewayConfig, 'dataDir'>;
  storage: Pick<Storage, 'signingKeys'>;
  cipher: SecretCipher;
  clock: Clock;
}): Promise<Keyring> {
  const { storage, cipher, clock } = options;
  if (storage.signingKeys === undefined) {
    return SigningKeyring.open(join(options.config.dataDir, 'keys'), clock);
  }
  return SharedSigningKeyring.open({
    store: storage.signingKeys,
    sealer: keySealer(cipher),
    clock,
  });
}

/**
 * Seals signing keys with the secrets' cipher, bound to the name `signing-key/<kid>` of no tenant
 * (no secret can have it: tenants are never empty), so a sealed key moved elsewhere fails to open.
 */
export function keySealer(cipher: SecretCipher): KeySealer {
  const binding = (kid: string) => ({ tenant: '', name: `signing-key/${kid}`, version: 1 });
  return {
    keyId: cipher.keyId,
    seal: (kid, pem) => cipher.seal(binding(kid), pem),
    unseal: (kid, sealed) => cipher.unseal(binding(kid), sealed),
  };
}
