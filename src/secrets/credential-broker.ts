import { ErrorCode, GatehouseError, isGatehouseError, isoTime } from '../core/index.js';
import type { AuditRecordDraft, Clock, IdGenerator, OriginBoundHeader } from '../core/index.js';
import {
  credentialNeedProblems,
  credentialNeedSentences,
  headerOrigin,
  injectionTarget,
} from './credential-need.js';
import type { CredentialNeed } from './credential-need.js';
import type { SecretCipher } from './secret-cipher.js';
import type { SecretStore, StoredSecret } from './secret-store.js';

/** Collaborators of {@link CredentialBroker}. */
export interface CredentialBrokerOptions {
  store: SecretStore;
  cipher: SecretCipher;
  clock: Clock;
  ids: IdGenerator;
  /** How many ended invocations are remembered, to refuse a late issue; default 10 000. */
  rememberEnded?: number;
}

/** One issued credential as the receipt shows it: no value. */
export interface CredentialLease {
  id: string;
  ref: string;
  scope: string;
  /** The secret version issued. */
  version: number;
  /** ISO 8601 time the lease ends at the latest. */
  expiresAt: string;
}

/** What the sandbox and executors receive for one call. Holds values: never log or store it. */
export interface IssuedCredentials {
  /** Environment variables to add to the tool's process. */
  env: Record<string, string>;
  /** Files to place (read-only) in the sandbox. */
  files: { path: string; content: string; mode: number }[];
  /**
   * Headers to add to the tool's HTTP requests, each bound to the exact origin its need declared
   * (see {@link headerOrigin}); `origin` absent means every request. Apply with `headersForOrigin`.
   */
  headers: OriginBoundHeader[];
  /** Every issued value by secret name, for the call's sanitizer. */
  values: { name: string; value: string }[];
  /** The leases, for the trace and the receipt. */
  leases: CredentialLease[];
}

interface LiveLease extends CredentialLease {
  expiresAtMs: number;
}

interface LiveInvocation {
  tenant: string;
  leases: LiveLease[];
}

const FILE_MODE = 0o400;

/**
 * The credential broker (DESIGN §3 stage 6): opens the secrets a descriptor declares and issues
 * them as leases scoped to one invocation, with a TTL no longer than the call's timeout, until
 * {@link revoke}. Fails closed: any problem with any credential throws before anything is issued.
 * Issue and revoke are audited with refs, scopes, versions and targets, never values.
 *
 * Leases live in this process's memory: after a restart none is live, which is the safe side.
 */
export class CredentialBroker {
  private readonly store: SecretStore;
  private readonly cipher: SecretCipher;
  private readonly clock: Clock;
  private readonly ids: IdGenerator;
  private readonly rememberEnded: number;
  private readonly live = new Map<string, LiveInvocation>();
  /** Lease id → invocation id, for {@link isLive}. */
  private readonly leaseIndex = new Map<string, string>();
  /** Invocations whose leases ended, oldest first. */
  private readonly ended = new Set<string>();

  constructor(options: CredentialBrokerOptions) {
    this.store = options.store;
    this.cipher = options.cipher;
    this.clock = options.clock;
    this.ids = options.ids;
    this.rememberEnded = options.rememberEnded ?? 10_000;
  }

  /**
   * Issues every credential in `needs` for one invocation, each as a lease ending `ttlMs` from
   * now. All or nothing; nothing is issued when it throws. Calling again for a live invocation
   * adds leases; for an ended one it is refused.
   * @throws GatehouseError, naming the ref and the reason, never a value:
   *   - CREDENTIAL_LEASE_ENDED when `ttlMs` is not a positive number or the invocation's leases
   *     were revoked or have expired;
   *   - INVALID_DESCRIPTOR when two needs inject into the same place or set a framing header;
   *   - CREDENTIAL_UNAVAILABLE when a secret is missing, deleted, undecryptable (another master
   *     key, or tampered) or holds a value its injection cannot carry, or the audit write fails;
   *   - CREDENTIAL_SCOPE_DENIED when a secret does not grant the scope asked for.
   */
  async issue(
    tenant: string,
    invocationId: string,
    needs: readonly CredentialNeed[],
    ttlMs: number,
  ): Promise<IssuedCredentials> {
    const { issued, audit, leases } = await this.grant(tenant, invocationId, needs, ttlMs);
    if (!audit) return issued;
    try {
      await this.store.appendAudit([audit]);
    } catch (cause) {
      this.forget(invocationId, leases);
      throw new GatehouseError(
        ErrorCode.CREDENTIAL_UNAVAILABLE,
        `Credentials for invocation ${invocationId} were not issued: their audit record could not be written.`,
        { details: { invocationId, reason: 'audit-failed' }, cause },
      );
    }
    if (!this.live.has(invocationId)) throw leaseEnded(invocationId, 'were revoked meanwhile');
    return issued;
  }

  /**
   * Issues like {@link issue} but hands the `credential.issued` audit record to the caller, who
   * writes it in the same commit as the call's next step, before any effect (the invocation
   * pipeline: one commit instead of two). If that commit fails, the caller must {@link revoke}.
   * @throws as {@link issue}, except for the audit write, which is the caller's.
   */
  async issueRecorded(
    tenant: string,
    invocationId: string,
    needs: readonly CredentialNeed[],
    ttlMs: number,
  ): Promise<{ issued: IssuedCredentials; audit?: AuditRecordDraft }> {
    const { issued, audit } = await this.grant(tenant, invocationId, needs, ttlMs);
    return audit ? { issued, audit } : { issued };
  }

  /**
   * Ends every lease of an invocation, and records that (with `reason`) when it had any. Safe to
   * repeat. The leases end even if the audit write then fails, in which case it throws that error.
   */
  async revoke(invocationId: string, reason = 'invocation ended'): Promise<void> {
    const audit = this.end(invocationId, reason);
    if (audit) await this.store.appendAudit([audit]);
  }

  /**
   * Ends every lease of an invocation at once, like {@link revoke}, and returns the
   * `credential.revoked` audit record (undefined when it had none) for the caller to write with
   * its own next commit.
   */
  end(invocationId: string, reason = 'invocation ended'): AuditRecordDraft | undefined {
    const entry = this.live.get(invocationId);
    this.live.delete(invocationId);
    this.markEnded(invocationId);
    if (!entry) return undefined;
    for (const l of entry.leases) this.leaseIndex.delete(l.id);
    return {
      tenant: entry.tenant,
      type: 'credential.revoked',
      subject: `invocation/${invocationId}`,
      at: isoTime(this.clock.now()),
      actor: 'system',
      data: { invocationId, leases: entry.leases.map((l) => l.id), reason },
    };
  }

  /** True while a lease is issued, not revoked and not expired. */
  isLive(leaseId: string): boolean {
    const invocationId = this.leaseIndex.get(leaseId);
    const lease = invocationId
      ? this.live.get(invocationId)?.leases.find((l) => l.id === leaseId)
      : undefined;
    return lease !== undefined && lease.expiresAtMs > this.clock.now();
  }

  /**
   * Revokes (reason `expired`) every invocation with an expired lease; for the reaper. Safe to
   * repeat. @returns the invocation ids revoked.
   */
  async revokeExpired(): Promise<string[]> {
    const now = this.clock.now();
    const expired = [...this.live]
      .filter(([, e]) => e.leases.some((l) => l.expiresAtMs <= now))
      .map(([id]) => id);
    for (const id of expired) await this.revoke(id, 'expired');
    return expired;
  }

  /** Opens, unseals and registers the leases; the `credential.issued` record is not written. */
  private async grant(
    tenant: string,
    invocationId: string,
    needs: readonly CredentialNeed[],
    ttlMs: number,
  ): Promise<{ issued: IssuedCredentials; audit?: AuditRecordDraft; leases: LiveLease[] }> {
    await this.refuseEnded(invocationId);
    if (!Number.isFinite(ttlMs) || ttlMs <= 0) {
      throw new GatehouseError(
        ErrorCode.CREDENTIAL_LEASE_ENDED,
        `Credentials for invocation ${invocationId} need a positive lease TTL; the call has ${ttlMs} ms left.`,
        { details: { invocationId, ttlMs } },
      );
    }
    const problems = credentialNeedSentences(credentialNeedProblems(needs));
    if (problems.length > 0) {
      throw new GatehouseError(
        ErrorCode.INVALID_DESCRIPTOR,
        `The descriptor's credentials cannot be issued: ${problems.join('; ')}.`,
        { details: { problems } },
      );
    }
    const issued: IssuedCredentials = { env: {}, files: [], headers: [], values: [], leases: [] };
    if (needs.length === 0) return { issued, leases: [] };

    const now = this.clock.now();
    const expiresAtMs = now + ttlMs;
    const leases: LiveLease[] = [];
    for (const need of needs) {
      const secret = await this.open(tenant, need);
      const value = this.unseal(secret, need);
      inject(issued, need, value);
      if (!issued.values.some((v) => v.name === need.ref))
        issued.values.push({ name: need.ref, value });
      leases.push({
        id: this.ids.next(),
        ref: need.ref,
        scope: need.scope,
        version: secret.version,
        expiresAt: isoTime(expiresAtMs),
        expiresAtMs,
      });
    }
    issued.leases = leases.map(({ expiresAtMs: _, ...lease }) => lease);
    if (this.ended.has(invocationId)) throw leaseEnded(invocationId, 'were revoked meanwhile');

    // Registered before the audit write, so a revoke that arrives meanwhile ends them too.
    const entry = this.live.get(invocationId) ?? { tenant, leases: [] };
    entry.leases.push(...leases);
    this.live.set(invocationId, entry);
    for (const l of leases) this.leaseIndex.set(l.id, invocationId);
    const audit: AuditRecordDraft = {
      tenant,
      type: 'credential.issued',
      subject: `invocation/${invocationId}`,
      at: isoTime(now),
      actor: 'system',
      data: {
        invocationId,
        leases: leases.map((l, i) => ({
          id: l.id,
          ref: l.ref,
          scope: l.scope,
          version: l.version,
          target: injectionTarget(needs[i]!.inject),
          expiresAt: l.expiresAt,
        })),
      },
    };
    return { issued, audit, leases };
  }

  private async refuseEnded(invocationId: string): Promise<void> {
    const entry = this.live.get(invocationId);
    if (entry?.leases.some((l) => l.expiresAtMs <= this.clock.now()))
      await this.revoke(invocationId, 'expired');
    if (this.ended.has(invocationId))
      throw leaseEnded(invocationId, 'were revoked or have expired');
  }

  private async open(tenant: string, need: CredentialNeed): Promise<StoredSecret> {
    const secret = await this.store.latest(tenant, need.ref);
    if (!secret) {
      const deleted = (await this.store.topVersion(tenant, need.ref)) > 0;
      throw new GatehouseError(
        ErrorCode.CREDENTIAL_UNAVAILABLE,
        deleted
          ? `Credential ${need.ref} cannot be issued: secret ${need.ref} was deleted.`
          : `Credential ${need.ref} cannot be issued: no secret named ${need.ref} exists in this tenant.`,
        { details: { ref: need.ref, reason: deleted ? 'deleted' : 'missing' } },
      );
    }
    if (!secret.scopes.includes(need.scope)) {
      throw new GatehouseError(
        ErrorCode.CREDENTIAL_SCOPE_DENIED,
        `Credential ${need.ref} cannot be issued: secret ${need.ref} does not grant scope ${need.scope} (it grants ${secret.scopes.join(', ')}).`,
        { details: { ref: need.ref, scope: need.scope, reason: 'scope' } },
      );
    }
    return secret;
  }

  private unseal(secret: StoredSecret, need: CredentialNeed): string {
    let value: string;
    try {
      value = this.cipher.unseal(secret, secret.sealed);
    } catch (err) {
      const inner = isGatehouseError(err) ? err : undefined;
      throw new GatehouseError(
        ErrorCode.CREDENTIAL_UNAVAILABLE,
        `Credential ${need.ref} cannot be issued: ${inner?.message ?? 'its secret does not decrypt.'}`,
        { details: { ref: need.ref, reason: 'undecryptable', ...inner?.details }, cause: err },
      );
    }
    const unfit = unfitFor(need, value);
    if (unfit) {
      throw new GatehouseError(
        ErrorCode.CREDENTIAL_UNAVAILABLE,
        `Credential ${need.ref} cannot be issued: secret ${need.ref} holds ${unfit}.`,
        { details: { ref: need.ref, reason: 'unusable-value' } },
      );
    }
    return value;
  }

  private forget(invocationId: string, leases: LiveLease[]): void {
    const entry = this.live.get(invocationId);
    if (!entry) return;
    entry.leases = entry.leases.filter((l) => !leases.includes(l));
    for (const l of leases) this.leaseIndex.delete(l.id);
    if (entry.leases.length === 0) this.live.delete(invocationId);
  }

  private markEnded(invocationId: string): void {
    this.ended.delete(invocationId);
    this.ended.add(invocationId);
    if (this.ended.size > this.rememberEnded) {
      const oldest = this.ended.values().next().value;
      if (oldest !== undefined) this.ended.delete(oldest);
    }
  }
}

function leaseEnded(invocationId: string, why: string): GatehouseError {
  return new GatehouseError(
    ErrorCode.CREDENTIAL_LEASE_ENDED,
    `The credential leases of invocation ${invocationId} ${why}; no more are issued for it.`,
    { details: { invocationId } },
  );
}

/** Why `value` cannot travel the way `need` injects it, or undefined. */
function unfitFor(need: CredentialNeed, value: string): string | undefined {
  if ('env' in need.inject && value.includes('\u0000'))
    return 'a NUL character, which an environment variable cannot carry';
  if ('header' in need.inject && hasHeaderUnsafe(value))
    return 'control characters (such as a line break), which an HTTP header cannot carry';
  return undefined;
}

/** Control characters other than tab would split or corrupt a header. */
function hasHeaderUnsafe(value: string): boolean {
  for (let i = 0; i < value.length; i++) {
    const c = value.charCodeAt(i);
    if ((c < 0x20 && c !== 0x09) || c === 0x7f) return true;
  }
  return false;
}

function inject(issued: IssuedCredentials, need: CredentialNeed, value: string): void {
  const how = need.inject;
  if ('env' in how) {
    issued.env[how.env] = value;
  } else if ('file' in how) {
    issued.files.push({ path: how.file, content: value, mode: FILE_MODE });
  } else {
    // A function replacement, so `$&` and the like in a value are not patterns.
    const formatted = how.format === undefined ? value : how.format.replace('{value}', () => value);
    // Problems were checked first, so a need naming a host or origin has one here.
    const origin = headerOrigin(how);
    issued.headers.push({
      ...(origin === undefined ? {} : { origin }),
      name: how.header,
      value: formatted,
    });
  }
}
