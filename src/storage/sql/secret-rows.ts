import type { Kysely } from 'kysely';
import { ErrorCode, GatehouseError } from '../../core/index.js';
import type { SecretMetadata, StoredSecret } from '../../secrets/index.js';
import type { Tables } from '../schema/tables.js';

type SecretRow = Tables['secrets'];

/** The row of a new secret version. */
export function secretRow(s: StoredSecret): SecretRow {
  return {
    tenant: s.tenant,
    name: s.name,
    version: s.version,
    scopes: JSON.stringify(s.scopes),
    ciphertext: s.sealed.ciphertext,
    iv: s.sealed.iv,
    tag: s.sealed.tag,
    key_id: s.sealed.keyId,
    created_at: s.createdAt,
    deleted_at: null,
  };
}

/** A secret's metadata (never its value) from its row. */
export function toSecretMetadata(
  r: Pick<SecretRow, 'name' | 'version' | 'scopes' | 'created_at'>,
): SecretMetadata {
  return {
    name: r.name,
    version: Number(r.version),
    scopes: JSON.parse(r.scopes) as string[],
    createdAt: r.created_at,
  };
}

/** A stored (sealed) secret from its row. */
export function toStoredSecret(r: SecretRow): StoredSecret {
  return {
    tenant: r.tenant,
    ...toSecretMetadata(r),
    sealed: { ciphertext: r.ciphertext, iv: r.iv, tag: r.tag, keyId: r.key_id },
  };
}

/**
 * Checks that `secret` may be stored: the next version after `top`, and, for a rotation, while
 * the live version is still `replaces`.
 * @throws GatehouseError CONFLICT otherwise.
 */
export function checkSecretVersion(
  secret: StoredSecret,
  top: number,
  replaces: number | undefined,
  live: number | undefined,
): void {
  if (secret.version !== top + 1) {
    throw new GatehouseError(
      ErrorCode.CONFLICT,
      `Secret ${secret.name} is at version ${top}; version ${secret.version} cannot follow it. Retry.`,
      { details: { currentVersion: top } },
    );
  }
  if (replaces !== undefined && live !== replaces) {
    throw new GatehouseError(
      ErrorCode.CONFLICT,
      `Secret ${secret.name} changed while it was being rotated (it is ${live !== undefined ? `at version ${live}` : 'deleted'}). Retry.`,
    );
  }
}

/** The latest live version of each secret of a tenant (metadata columns), by name. */
export function liveSecretsQuery(k: Kysely<Tables>, tenant: string) {
  return k
    .selectFrom('secrets as s')
    .select(['s.name', 's.version', 's.scopes', 's.created_at'])
    .where('s.tenant', '=', tenant)
    .where('s.deleted_at', 'is', null)
    .where((eb) =>
      eb.not(
        eb.exists(
          eb
            .selectFrom('secrets as n')
            .select('n.version')
            .whereRef('n.tenant', '=', 's.tenant')
            .whereRef('n.name', '=', 's.name')
            .where('n.deleted_at', 'is', null)
            .whereRef('n.version', '>', 's.version'),
        ),
      ),
    )
    .orderBy('s.name');
}

/** The latest live version of a secret. */
export function latestSecretQuery(k: Kysely<Tables>, tenant: string, name: string) {
  return k
    .selectFrom('secrets')
    .selectAll()
    .where('tenant', '=', tenant)
    .where('name', '=', name)
    .where('deleted_at', 'is', null)
    .orderBy('version', 'desc')
    .limit(1);
}

/** The highest version of a secret ever stored, deleted or not (`top`, null for none). */
export function topSecretVersionQuery(k: Kysely<Tables>, tenant: string, name: string) {
  return k
    .selectFrom('secrets')
    .select((eb) => eb.fn.max('version').as('top'))
    .where('tenant', '=', tenant)
    .where('name', '=', name);
}

/** Marks every live version of a secret deleted at `at`. */
export function deleteSecretQuery(k: Kysely<Tables>, tenant: string, name: string, at: string) {
  return k
    .updateTable('secrets')
    .set({ deleted_at: at })
    .where('tenant', '=', tenant)
    .where('name', '=', name)
    .where('deleted_at', 'is', null);
}
