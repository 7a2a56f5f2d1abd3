import { ErrorCode, GatehouseError } from '../core/index.js';

/** The longest a token may live: a token is a credential, not an identity. */
export const MAX_TOKEN_TTL_MS = 366 * 24 * 3600 * 1000;

/** The shortest a token may live when made (short-lived tokens for one job are fine). */
export const MIN_TOKEN_TTL_MS = 1000;

/** The default lifetime of a new token when neither the caller nor the configuration says. */
export const DEFAULT_TOKEN_TTL_MS = 90 * 24 * 3600 * 1000;

const UNIT_MS = { s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 } as const;

/**
 * Milliseconds of a duration written `90d`, `12h`, `30m` or `45s`.
 * @throws GatehouseError INVALID_INPUT naming `what` (and `details.pointer` when `what` is a JSON
 *   pointer) when it is not one of those forms.
 */
export function parseDuration(text: string, what: string): number {
  const m = /^([1-9]\d{0,6})([smhd])$/.exec(text.trim());
  if (!m)
    throw new GatehouseError(
      ErrorCode.INVALID_INPUT,
      `${what} must be a duration like 90d, 12h, 30m or 45s; got ${JSON.stringify(text)}.`,
      what.startsWith('/') ? { details: { pointer: what } } : {},
    );
  return Number(m[1]) * UNIT_MS[m[2] as keyof typeof UNIT_MS];
}

/**
 * When a token made at `now` expires: at `expiresAt` (ISO 8601) or after `ttl` (a duration) when
 * one is given, else after `defaultTtlMs`. `pointer` names where the value came from in errors.
 * @throws GatehouseError INVALID_INPUT when both are given, when either does not parse, or when
 *   the expiry is less than a second or more than 366 days away.
 */
export function tokenExpiry(
  now: number,
  given: { ttl?: string; expiresAt?: string },
  defaultTtlMs: number,
  pointer = '',
): string {
  if (given.ttl !== undefined && given.expiresAt !== undefined)
    throw new GatehouseError(
      ErrorCode.INVALID_INPUT,
      `Give ${pointer}/ttl or ${pointer}/expiresAt, not both.`,
      { details: { pointer: `${pointer}/ttl` } },
    );
  let at: number;
  let where: string;
  if (given.expiresAt !== undefined) {
    where = `${pointer}/expiresAt`;
    at = /^\d{4}-\d{2}-\d{2}T/.test(given.expiresAt) ? Date.parse(given.expiresAt) : NaN;
    if (Number.isNaN(at))
      throw new GatehouseError(
        ErrorCode.INVALID_INPUT,
        `${where} must be an ISO 8601 time such as 2027-01-31T00:00:00Z; got ${JSON.stringify(given.expiresAt)}.`,
        { details: { pointer: where } },
      );
  } else {
    where = `${pointer}/ttl`;
    at = now + (given.ttl !== undefined ? parseDuration(given.ttl, where) : defaultTtlMs);
  }
  if (at - now < MIN_TOKEN_TTL_MS || at - now > MAX_TOKEN_TTL_MS)
    throw new GatehouseError(
      ErrorCode.INVALID_INPUT,
      `${where}: a token must expire between one second and 366 days from now; got ${new Date(at).toISOString()}.`,
      { details: { pointer: where } },
    );
  return new Date(at).toISOString();
}
