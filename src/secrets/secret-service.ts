import { ErrorCode, GatehouseError, isoTime } from '../core/index.js';
import type { AuditRecordDraft, Clock } from '../core/index.js';
import { SECRET_NAME_PATTERN, SECRET_SCOPE_PATTERN } from './credential-need.js';
import type { SecretCipher } from './secret-cipher.js';
import type { SecretMetadata, SecretStore } from './secret-store.js';

/** Collaborators of {@link SecretService}. */
export interface SecretServiceOptions {
  store: SecretStore;
  cipher: SecretCipher;
  clock: Clock;
}

/** The largest secret value, in UTF-8 bytes. */
export const MAX_SECRET_BYTES = 64 * 1024;

const NAME = new RegExp(SECRET_NAME_PATTERN);
const SCOPE = new RegExp(SECRET_SCOPE_PATTERN);
const MAX_SCOPES = 64;

/**
 * Administration of a tenant's secrets: put, rotate, delete, list. Values go in and are sealed at
 * once; no method gives a value back (only the credential broker opens them). Every change is
 * audited with the name, version, scopes and key id, never the value.
 */
export class SecretService {
  private readonly store: SecretStore;
  private readonly cipher: SecretCipher;
  private readonly clock: Clock;

  constructor(options: SecretServiceOptions) {
    this.store = options.store;
    this.cipher = options.cipher;
    this.clock = options.clock;
  }

  /**
   * Stores `value` as a new version of `name` with `scopes` (replacing the scopes of any earlier
   * version). Not idempotent: each call makes a new version.
   * @throws GatehouseError INVALID_INPUT for a bad name, value or scopes; CONFLICT when a
   *   concurrent change to the same name won.
   */
  async put(
    tenant: string,
    name: string,
    value: string,
    scopes: readonly string[],
    actor: string,
  ): Promise<SecretMetadata> {
    checkName(name);
    checkValue(value);
    const clean = checkScopes(scopes);
    const version = (await this.store.topVersion(tenant, name)) + 1;
    return this.write(tenant, name, version, value, clean, actor, 'secret.put');
  }

  /**
   * Stores `value` as a new version of an existing secret, keeping its scopes.
   * @throws GatehouseError INVALID_INPUT for a bad name or value; NOT_FOUND when no live secret
   *   has that name; CONFLICT when it changed (or was deleted) meanwhile.
   */
  async rotate(
    tenant: string,
    name: string,
    value: string,
    actor: string,
  ): Promise<SecretMetadata> {
    checkName(name);
    checkValue(value);
    const live = await this.store.latest(tenant, name);
    if (!live) throw notFound(name);
    const version = (await this.store.topVersion(tenant, name)) + 1;
    return this.write(
      tenant,
      name,
      version,
      value,
      live.scopes,
      actor,
      'secret.rotated',
      live.version,
    );
  }

  /**
   * Deletes every version of a secret (kept as tombstones; a later put starts a new version).
   * @throws GatehouseError INVALID_INPUT for a bad name; NOT_FOUND when no live secret has that
   *   name (so a repeat is NOT_FOUND and changes nothing).
   */
  async delete(tenant: string, name: string, actor: string): Promise<void> {
    checkName(name);
    const at = isoTime(this.clock.now());
    const deleted = await this.store.delete(tenant, name, at, {
      tenant,
      type: 'secret.deleted',
      subject: `secret/${name}`,
      at,
      actor,
      data: { name },
    });
    if (!deleted) throw notFound(name);
  }

  /** Metadata of the tenant's live secrets, by name; never a value. */
  list(tenant: string): Promise<SecretMetadata[]> {
    return this.store.list(tenant);
  }

  private async write(
    tenant: string,
    name: string,
    version: number,
    value: string,
    scopes: string[],
    actor: string,
    type: 'secret.put' | 'secret.rotated',
    replaces?: number,
  ): Promise<SecretMetadata> {
    const createdAt = isoTime(this.clock.now());
    const sealed = this.cipher.seal({ tenant, name, version }, value);
    const audit: AuditRecordDraft = {
      tenant,
      type,
      subject: `secret/${name}`,
      at: createdAt,
      actor,
      data: { name, version, scopes, keyId: sealed.keyId },
    };
    await this.store.put(
      { tenant, name, version, scopes, createdAt, sealed },
      audit,
      replaces === undefined ? {} : { replaces },
    );
    return { name, version, scopes, createdAt };
  }
}

function notFound(name: string): GatehouseError {
  return new GatehouseError(ErrorCode.NOT_FOUND, `No secret named ${name} exists in your tenant.`, {
    details: { name },
  });
}

function checkName(name: unknown): asserts name is string {
  if (typeof name !== 'string' || !NAME.test(name)) {
    throw new GatehouseError(
      ErrorCode.INVALID_INPUT,
      `A secret name must match ${SECRET_NAME_PATTERN} (lower-case letters, digits, ".", "_", "-"; at most 63); got ${JSON.stringify(name)}.`,
      { details: { pointer: '/name' } },
    );
  }
}

function checkValue(value: unknown): asserts value is string {
  if (typeof value !== 'string' || value.length === 0) {
    throw new GatehouseError(ErrorCode.INVALID_INPUT, '/value must be a non-empty string.', {
      details: { pointer: '/value' },
    });
  }
  const bytes = Buffer.byteLength(value, 'utf8');
  if (bytes > MAX_SECRET_BYTES) {
    throw new GatehouseError(
      ErrorCode.INVALID_INPUT,
      `/value is ${bytes} bytes; a secret holds at most ${MAX_SECRET_BYTES} (64 KiB).`,
      { details: { pointer: '/value' } },
    );
  }
}

/** The scopes, without repeats, sorted. */
function checkScopes(scopes: unknown): string[] {
  if (!Array.isArray(scopes) || scopes.length === 0 || scopes.length > MAX_SCOPES) {
    throw new GatehouseError(
      ErrorCode.INVALID_INPUT,
      `/scopes must be a list of 1 to ${MAX_SCOPES} scopes (e.g. ["github:read"]).`,
      { details: { pointer: '/scopes' } },
    );
  }
  scopes.forEach((s: unknown, i) => {
    if (typeof s !== 'string' || !SCOPE.test(s)) {
      throw new GatehouseError(
        ErrorCode.INVALID_INPUT,
        `/scopes/${i} must be 1 to 128 printable ASCII characters without spaces; got ${JSON.stringify(s)}.`,
        { details: { pointer: `/scopes/${i}` } },
      );
    }
  });
  return [...new Set(scopes as string[])].sort();
}
