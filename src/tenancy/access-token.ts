/**
 * A bearer token of a principal, as stored: the SHA-256 of its secret (the secret itself is shown
 * once, when the token is made), when it expires, and whether and when it was revoked or replaced.
 * A principal may hold several; each has its own id, expiry and revocation.
 */
export interface StoredToken {
  id: string;
  tenant: string;
  /** The principal it authenticates as. */
  principal: string;
  /** Where it is used (`ci`, `laptop`), for people; optional. */
  label: string | null;
  /** Lowercase hex SHA-256 of the secret: 256 random bits, so no slower hash is needed. */
  hash: string;
  createdAt: string;
  /** Who made it: a principal id, `demo-seed`, `migration`. */
  createdBy: string;
  /** After this it authenticates no one. */
  expiresAt: string;
  /**
   * When it stops (or stopped) working by revocation; for a rotated token the end of the overlap,
   * which may lie ahead. Null while it is not revoked.
   */
  revokedAt: string | null;
  revokedBy: string | null;
  revokeReason: string | null;
  /** The token a rotation made in its place. */
  replacedBy: string | null;
  /** Roughly when it was last used: kept to the minute, not per request. */
  lastUsedAt: string | null;
}

/** Where a token stands at a moment. */
export const TokenStatus = {
  active: 'active',
  expired: 'expired',
  revoked: 'revoked',
} as const;
export type TokenStatus = (typeof TokenStatus)[keyof typeof TokenStatus];

/** A token as listed: never its secret nor its hash. */
export interface TokenInfo {
  id: string;
  principal: { id: string; name: string; roles: string[] };
  label: string | null;
  status: TokenStatus;
  createdAt: string;
  createdBy: string;
  expiresAt: string;
  lastUsedAt: string | null;
  revokedAt: string | null;
  revokedBy: string | null;
  revokeReason: string | null;
  replacedBy: string | null;
}

/** The status of a token at time `now` (ms). */
export function tokenStatus(t: StoredToken, now: number): TokenStatus {
  if (t.revokedAt !== null && Date.parse(t.revokedAt) <= now) return TokenStatus.revoked;
  if (Date.parse(t.expiresAt) <= now) return TokenStatus.expired;
  return TokenStatus.active;
}

/** When a token stops working (its expiry, or a revocation before it), in ms. */
export function tokenEnd(t: StoredToken): number {
  const expires = Date.parse(t.expiresAt);
  return t.revokedAt === null ? expires : Math.min(expires, Date.parse(t.revokedAt));
}
