import { randomBytes } from 'node:crypto';
import { ErrorCode, GatehouseError, isoTime, sha256Hex } from '../core/index.js';
import type { Clock, IdGenerator, LedgerEntries } from '../core/index.js';
import { tokenEnd, tokenStatus } from './access-token.js';
import type { StoredToken, TokenInfo } from './access-token.js';
import type { Principal } from './principal.js';
import type { StoredPrincipal, TenancyStore } from './tenancy-store.js';
import { tokenExpiry } from './token-ttl.js';
import { TokenWatch } from './token-watch.js';

/** Options of {@link AccessTokens}. */
export interface AccessTokensOptions {
  store: TenancyStore;
  clock: Clock;
  ids: IdGenerator;
  /** How long a new token lives when its maker does not say. */
  defaultTtlMs: number;
  /** The principal of an id, from the directory. */
  principal: (id: string) => StoredPrincipal | undefined;
}

/** What a bearer token proves, or why it proves nothing (a message for the caller). */
export type Authentication =
  | { ok: true; principal: Principal; token: { id: string; expiresAt: string } }
  | { ok: false; message: string };

/** A new token's secret (shown once) and what is listed of it. */
export interface NewToken {
  token: TokenInfo;
  secret: string;
}

/**
 * Whose tokens an operation reaches: `null` for every token of the tenant (admins), else the id of
 * the one principal whose own tokens it may touch (anyone else: a token of another principal is
 * answered as if it did not exist).
 */
export type TokenOwner = string | null;

/** How often at most a token's last use is written. */
const LAST_USED_EVERY_MS = 60_000;
/** Tokens one principal may hold at once (active ones; revoked and expired do not count). */
const MAX_ACTIVE_PER_PRINCIPAL = 20;
/** The longest a rotated token keeps working beside its successor. */
const MAX_OVERLAP_SECONDS = 3600;

/**
 * Bearer tokens of principals: made with an expiry, listed (never the secret), revoked, rotated;
 * each use remembered to the minute. Cached in memory for the hot path; only the SHA-256 of each
 * secret is stored. What holds a token open is told when it stops working ({@link watch}).
 */
export class AccessTokens {
  private readonly byHash = new Map<string, StoredToken>();
  private readonly byId = new Map<string, StoredToken>();
  /** When each token's last use was last written, in ms. */
  private readonly written = new Map<string, number>();
  private readonly watch_: TokenWatch;

  constructor(private readonly options: AccessTokensOptions) {
    this.watch_ = new TokenWatch(options.clock);
  }

  /** Takes the stored tokens (at start). */
  load(tokens: StoredToken[]): void {
    for (const t of tokens) this.remember(t);
  }

  /**
   * What a bearer secret proves now. A valid use is remembered (written at most once a minute).
   * The refusals say why (unknown, expired, revoked, replaced by rotation) without naming whose.
   */
  verify(secret: string): Authentication {
    const t = this.byHash.get(sha256Hex(secret));
    const principal = t && this.options.principal(t.principal);
    if (!t || !principal) return { ok: false, message: 'The bearer token is not valid.' };
    const now = this.options.clock.now();
    switch (tokenStatus(t, now)) {
      case 'expired':
        return {
          ok: false,
          message: `The bearer token expired at ${t.expiresAt}; ask an admin for a new one (gatehouse tokens create).`,
        };
      case 'revoked':
        return {
          ok: false,
          message: t.replacedBy
            ? `The bearer token was replaced by rotation and stopped working at ${t.revokedAt}; use the token the rotation gave.`
            : `The bearer token was revoked at ${t.revokedAt}; ask an admin for a new one.`,
        };
      case 'active':
        break;
    }
    this.used(t, now);
    const { createdAt: _, ...p } = principal;
    return { ok: true, principal: p, token: { id: t.id, expiresAt: t.expiresAt } };
  }

  /**
   * A token for a principal that is being created (the directory stores both together).
   * @throws GatehouseError INVALID_INPUT for a bad ttl or expiry.
   */
  draft(
    p: { tenant: string; principal: string },
    given: { ttl?: string; expiresAt?: string; label?: string },
    actor: string,
    secret?: string,
  ): { stored: StoredToken; secret: string } {
    const now = this.options.clock.now();
    const value = secret ?? newSecret();
    const stored: StoredToken = {
      id: this.options.ids.next(),
      tenant: p.tenant,
      principal: p.principal,
      label: given.label ?? null,
      hash: sha256Hex(value),
      createdAt: isoTime(now),
      createdBy: actor,
      expiresAt: tokenExpiry(now, given, this.options.defaultTtlMs),
      revokedAt: null,
      revokedBy: null,
      revokeReason: null,
      replacedBy: null,
      lastUsedAt: null,
    };
    return { stored, secret: value };
  }

  /** Makes a stored draft known (after the directory stored it with its principal). */
  remember(t: StoredToken): void {
    this.byHash.set(t.hash, t);
    this.byId.set(t.id, t);
  }

  /**
   * Makes a new token for a principal of the tenant (admins).
   * @throws GatehouseError NOT_FOUND (no such principal in the tenant), INVALID_INPUT (ttl or
   *   expiry), CONFLICT (the principal holds as many active tokens as it may).
   */
  async create(
    tenant: string,
    principalId: string,
    given: { ttl?: string; expiresAt?: string; label?: string },
    actor: string,
  ): Promise<NewToken> {
    const principal = this.options.principal(principalId);
    if (!principal || principal.tenant !== tenant)
      throw new GatehouseError(
        ErrorCode.NOT_FOUND,
        `Principal ${JSON.stringify(principalId)} does not exist (gatehouse principals list shows them).`,
        { details: { pointer: '/principal' } },
      );
    this.checkRoom(principalId);
    const { stored, secret } = this.draft({ tenant, principal: principalId }, given, actor);
    await this.options.store.putTokens([stored], this.ledger(stored, 'token.created', actor, {}));
    this.remember(stored);
    return { token: this.info(stored), secret };
  }

  /** A tenant's tokens (or one principal's: `owner`), newest first, at most `limit`. */
  list(
    tenant: string,
    owner: TokenOwner,
    filter: { principal?: string; limit: number },
  ): TokenInfo[] {
    return [...this.byId.values()]
      .filter(
        (t) =>
          t.tenant === tenant &&
          (owner === null || t.principal === owner) &&
          (filter.principal === undefined || t.principal === filter.principal),
      )
      .sort((a, b) => b.createdAt.localeCompare(a.createdAt) || b.id.localeCompare(a.id))
      .slice(0, filter.limit)
      .map((t) => this.info(t));
  }

  /** One token, as listed. @throws GatehouseError NOT_FOUND beyond `owner`'s reach. */
  get(tenant: string, id: string, owner: TokenOwner): TokenInfo {
    return this.info(this.find(tenant, id, owner));
  }

  /**
   * Revokes a token at once (one in a rotation's overlap stops now). Open streams and MCP sessions
   * of it are closed. Revoking a revoked token changes nothing: safe to repeat.
   * @throws GatehouseError NOT_FOUND beyond `owner`'s reach.
   */
  async revoke(
    tenant: string,
    id: string,
    owner: TokenOwner,
    actor: string,
    reason: string,
  ): Promise<TokenInfo> {
    const t = this.find(tenant, id, owner);
    const now = this.options.clock.now();
    if (tokenStatus(t, now) !== 'active') return this.info(t);
    const revoked: StoredToken = {
      ...t,
      revokedAt: isoTime(now),
      revokedBy: actor,
      revokeReason: reason || (t.revokeReason ?? 'revoked'),
    };
    await this.options.store.putTokens(
      [revoked],
      this.ledger(revoked, 'token.revoked', actor, { reason: revoked.revokeReason }),
    );
    this.replace(revoked);
    return this.info(revoked);
  }

  /**
   * Replaces a token by a new one (a new id and secret) of the same principal; the old one stops
   * working after `overlapSeconds` (0 to 3600, default 0: at once). An admin (`owner` null) may
   * give the new token an expiry (default: the configured lifetime); a principal rotating its
   * own token keeps the old expiry, so rotation never extends a credential's life.
   * @throws GatehouseError NOT_FOUND beyond `owner`'s reach, CONFLICT (not active, or already
   *   rotated), FORBIDDEN (a new expiry asked by a non-admin), INVALID_INPUT.
   */
  async rotate(
    tenant: string,
    id: string,
    owner: TokenOwner,
    actor: string,
    given: { overlapSeconds?: number; ttl?: string; expiresAt?: string },
  ): Promise<NewToken> {
    const old = this.find(tenant, id, owner);
    const now = this.options.clock.now();
    const overlap = given.overlapSeconds ?? 0;
    if (!Number.isInteger(overlap) || overlap < 0 || overlap > MAX_OVERLAP_SECONDS)
      throw new GatehouseError(
        ErrorCode.INVALID_INPUT,
        `/overlapSeconds must be an integer from 0 to ${MAX_OVERLAP_SECONDS}; got ${JSON.stringify(given.overlapSeconds)}.`,
        { details: { pointer: '/overlapSeconds' } },
      );
    const status = tokenStatus(old, now);
    if (status !== 'active' || old.replacedBy !== null)
      throw new GatehouseError(
        ErrorCode.CONFLICT,
        old.replacedBy
          ? `Token ${id} was already rotated into ${old.replacedBy}; rotate that one.`
          : `Token ${id} is ${status}; only an active token is rotated (make a new one with gatehouse tokens create).`,
        { details: { status, replacedBy: old.replacedBy } },
      );
    if (owner !== null && (given.ttl !== undefined || given.expiresAt !== undefined))
      throw new GatehouseError(
        ErrorCode.FORBIDDEN,
        `Rotating your own token keeps its expiry (${old.expiresAt}); only an admin gives a token a new one.`,
      );
    const secret = newSecret();
    const next: StoredToken = {
      ...old,
      id: this.options.ids.next(),
      hash: sha256Hex(secret),
      createdAt: isoTime(now),
      createdBy: actor,
      expiresAt:
        owner === null ? tokenExpiry(now, given, this.options.defaultTtlMs) : old.expiresAt,
      lastUsedAt: null,
    };
    const retired: StoredToken = {
      ...old,
      revokedAt: isoTime(now + overlap * 1000),
      revokedBy: actor,
      revokeReason: `rotated into ${next.id}`,
      replacedBy: next.id,
    };
    await this.options.store.putTokens(
      [retired, next],
      this.ledger(retired, 'token.rotated', actor, {
        replacedBy: next.id,
        overlapSeconds: overlap,
        expiresAt: next.expiresAt,
      }),
    );
    this.replace(retired);
    this.remember(next);
    return { token: this.info(next), secret };
  }

  /**
   * Calls `listener` once when token `id` stops working: at its expiry, at once on revocation,
   * at the end of a rotation's overlap. A token not issued here (an OAuth access token) ends at
   * `otherwiseEnd` (ms; default at once). @returns the unsubscribe; safe to call twice.
   */
  watch(id: string, listener: () => void, otherwiseEnd = 0): () => void {
    const t = this.byId.get(id);
    return this.watch_.watch(id, t ? tokenEnd(t) : otherwiseEnd, listener);
  }

  /** Stops every watch (the gateway is closing). */
  close(): void {
    this.watch_.close();
  }

  private find(tenant: string, id: string, owner: TokenOwner): StoredToken {
    const t = this.byId.get(id);
    if (!t || t.tenant !== tenant || (owner !== null && t.principal !== owner))
      throw new GatehouseError(ErrorCode.NOT_FOUND, `Token ${JSON.stringify(id)} does not exist.`);
    return t;
  }

  private replace(t: StoredToken): void {
    this.remember(t);
    this.watch_.moved(t.id, tokenEnd(t));
  }

  private checkRoom(principal: string): void {
    const now = this.options.clock.now();
    let active = 0;
    for (const t of this.byId.values())
      if (t.principal === principal && tokenStatus(t, now) === 'active') active += 1;
    if (active >= MAX_ACTIVE_PER_PRINCIPAL)
      throw new GatehouseError(
        ErrorCode.CONFLICT,
        `Principal ${principal} holds ${active} active tokens, as many as one principal may; revoke one first (gatehouse tokens list, gatehouse tokens revoke).`,
        { details: { limit: MAX_ACTIVE_PER_PRINCIPAL } },
      );
  }

  private used(t: StoredToken, now: number): void {
    const at = isoTime(now);
    t.lastUsedAt = at;
    const written = this.written.get(t.id) ?? 0;
    if (now - written < LAST_USED_EVERY_MS) return;
    this.written.set(t.id, now);
    // Bookkeeping: a failed write is retried at the next use after a minute, never fails a request.
    void this.options.store.touchTokens([{ id: t.id, lastUsedAt: at }]).catch(() => undefined);
  }

  private info(t: StoredToken): TokenInfo {
    const p = this.options.principal(t.principal);
    return {
      id: t.id,
      principal: { id: t.principal, name: p?.name ?? '(deleted)', roles: p?.roles ?? [] },
      label: t.label,
      status: tokenStatus(t, this.options.clock.now()),
      createdAt: t.createdAt,
      createdBy: t.createdBy,
      expiresAt: t.expiresAt,
      lastUsedAt: t.lastUsedAt,
      revokedAt: t.revokedAt,
      revokedBy: t.revokedBy,
      revokeReason: t.revokeReason,
      replacedBy: t.replacedBy,
    };
  }

  private ledger(
    t: StoredToken,
    type: string,
    actor: string,
    data: Record<string, unknown>,
  ): LedgerEntries {
    return {
      audit: [
        {
          tenant: t.tenant,
          type,
          subject: `token/${t.id}`,
          at: isoTime(this.options.clock.now()),
          actor,
          data: { principal: t.principal, label: t.label, expiresAt: t.expiresAt, ...data },
        },
      ],
      events: [],
    };
  }
}

/** A new bearer secret: 256 random bits. */
function newSecret(): string {
  return `gh_${randomBytes(32).toString('base64url')}`;
}
