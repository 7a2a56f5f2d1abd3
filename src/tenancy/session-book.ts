import { randomBytes, timingSafeEqual } from 'node:crypto';
import { ErrorCode, GatehouseError, isoTime, sha256Hex } from '../core/index.js';
import type { Clock } from '../core/index.js';
import { hasRole } from './principal.js';
import type { Principal } from './principal.js';

/** Options of {@link SessionBook}. */
export interface SessionBookOptions {
  clock: Clock;
  /** How long a session lasts from sign-in (default 8 hours: one working shift). */
  ttlMs?: number;
  /** Most sessions held at once (default 10 000); past it the oldest is revoked. */
  maxSessions?: number;
  /**
   * Calls the listener once when token `id` stops working (revoked, rotated out, expired);
   * returns the unwatch. A session ends with the token it was opened with.
   */
  watchToken: (id: string, listener: () => void) => () => void;
}

/** The bearer token a session was opened with: its id and expiry. */
export interface SessionToken {
  id: string;
  expiresAt: string;
}

/** A Studio session: a principal signed in with its bearer token, and its CSRF token. */
export interface Session {
  principal: Principal;
  /** Sent by the browser in the `X-CSRF-Token` header of every write. */
  csrfToken: string;
  expiresAt: string;
}

/** A session as {@link SessionBook.open} returns it: with the secret the cookie carries. */
export interface OpenedSession extends Session {
  /** The cookie's value; only its SHA-256 is kept. */
  secret: string;
  /** Whole seconds the session lasts from now (the cookie's Max-Age). */
  maxAgeSeconds: number;
}

/** A session with its expiry as a number; `session` is handed out as it is, never copied. */
interface Held {
  session: Session;
  expiresMs: number;
  /** Stops watching the session's token. */
  unwatch: () => void;
}

/**
 * The Studio's sign-in sessions (DESIGN §11): a bearer token exchanged for a random session secret
 * with an expiry, never later than the token's; revoking or rotating out the token ends them. Held in memory, keyed by the secret's SHA-256: a restart signs everyone out, and
 * on several nodes a session is known only to the node that opened it.
 */
export class SessionBook {
  private readonly sessions = new Map<string, Held>();
  /** How long a session lasts from sign-in. */
  readonly ttlMs: number;
  private readonly maxSessions: number;

  constructor(private readonly options: SessionBookOptions) {
    this.ttlMs = options.ttlMs ?? 8 * 3600 * 1000;
    this.maxSessions = options.maxSessions ?? 10_000;
  }

  /**
   * Opens a session for a person, signed in with `token`. Agents never sign in.
   * @throws GatehouseError FORBIDDEN when the principal is an agent (or holds no human role).
   */
  open(principal: Principal, token: SessionToken): OpenedSession {
    if (hasRole(principal, 'agent') || principal.roles.length === 0) {
      throw new GatehouseError(
        ErrorCode.FORBIDDEN,
        'Agents cannot sign in to the Studio: it is for reviewers, operators, maintainers and admins. Sign in with a person’s token.',
      );
    }
    this.dropExpired();
    while (this.sessions.size >= this.maxSessions) {
      // Maps iterate in insertion order: the first key is the oldest session.
      const oldest = this.sessions.keys().next().value;
      if (oldest === undefined) break;
      this.drop(oldest);
    }
    const secret = randomBytes(32).toString('base64url');
    const key = sha256Hex(secret);
    const now = this.options.clock.now();
    const expiresMs = Math.min(now + this.ttlMs, Date.parse(token.expiresAt));
    const session: Session = {
      principal,
      csrfToken: randomBytes(32).toString('base64url'),
      expiresAt: isoTime(expiresMs),
    };
    const unwatch = this.options.watchToken(token.id, () => this.drop(key));
    this.sessions.set(key, { session, expiresMs, unwatch });
    return { ...session, secret, maxAgeSeconds: Math.max(0, Math.floor((expiresMs - now) / 1000)) };
  }

  /** The live session a cookie's secret names, or undefined (unknown, revoked or expired). */
  find(secret: string): Session | undefined {
    const key = sha256Hex(secret);
    const held = this.sessions.get(key);
    if (!held) return undefined;
    if (held.expiresMs <= this.options.clock.now()) {
      this.drop(key);
      return undefined;
    }
    return held.session;
  }

  /** True when `presented` is the session's CSRF token (compared in constant time). */
  static csrfMatches(session: Session, presented: string | undefined): boolean {
    if (presented === undefined) return false;
    const a = Buffer.from(session.csrfToken);
    const b = Buffer.from(presented);
    return a.length === b.length && timingSafeEqual(a, b);
  }

  /** Ends the session the secret names. Safe to repeat. */
  revoke(secret: string): void {
    this.drop(sha256Hex(secret));
  }

  /** The number of sessions held (expired ones included until they are next looked at). */
  get size(): number {
    return this.sessions.size;
  }

  private dropExpired(): void {
    const now = this.options.clock.now();
    for (const [key, held] of this.sessions) if (held.expiresMs <= now) this.drop(key);
  }

  private drop(key: string): void {
    const held = this.sessions.get(key);
    if (!held) return;
    this.sessions.delete(key);
    held.unwatch();
  }
}
