import { ErrorCode, GatehouseError } from '../core/index.js';
import type { Authentication, Directory } from '../tenancy/index.js';

// One pattern for every length bound: compiling a RegExp per request showed in the profile.
const BEARER = /^Bearer ([\x21-\x7e]+)$/;

/** The form of a JWT (three base64url parts, a JSON header): an OAuth access token. */
export const JWT = /^eyJ[\w-]*\.[\w-]*\.[\w-]*$/;

/**
 * The token of an `Authorization: Bearer <token>` header: printable ASCII, at most `maxLength`.
 * `noun` names the token in messages (`token`, `agent token`).
 * @throws GatehouseError UNAUTHENTICATED when the header is missing or not of that form.
 */
export function bearerToken(header: string | undefined, noun: string, maxLength: number): string {
  if (header === undefined)
    throw new GatehouseError(
      ErrorCode.UNAUTHENTICATED,
      `Authorization header missing: send "Authorization: Bearer <${noun}>".`,
    );
  const token = BEARER.exec(header)?.[1];
  if (token === undefined || token.length > maxLength)
    throw new GatehouseError(
      ErrorCode.UNAUTHENTICATED,
      `Authorization header must be "Bearer <${noun}>".`,
    );
  return token;
}

/**
 * What the token of an `Authorization: Bearer <token>` header proves now: its principal and the
 * token's id and expiry (REST and Studio sign-in: tokens of at most 512 characters).
 * @throws GatehouseError UNAUTHENTICATED when the header is missing or malformed, or the token is
 *   unknown, expired or revoked (the message says which).
 */
export function bearerPrincipal(
  directory: Pick<Directory, 'verify'>,
  header: string | undefined,
  o: { noun?: string; maxLength?: number } = {},
): Extract<Authentication, { ok: true }> {
  const proved = directory.verify(bearerToken(header, o.noun ?? 'token', o.maxLength ?? 512));
  if (!proved.ok) throw new GatehouseError(ErrorCode.UNAUTHENTICATED, proved.message);
  return proved;
}
