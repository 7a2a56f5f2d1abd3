import type { FastifyRequest } from 'fastify';
import { ErrorCode, GatehouseError } from '../core/index.js';
import { SessionBook } from '../tenancy/index.js';
import type { Principal, Session } from '../tenancy/index.js';
import type { GatewayServices } from './services.js';

/** The name of the Studio's session cookie. */
export const SESSION_COOKIE = 'gatehouse_session';

/** Methods that change nothing, which a session may use without its CSRF token. */
const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

/** The live session the request's cookie names, with the cookie's secret; undefined without one. */
export function sessionOf(
  s: GatewayServices,
  req: FastifyRequest,
): { session: Session; secret: string } | undefined {
  const secret = req.cookies[SESSION_COOKIE];
  if (secret === undefined || secret === '' || secret.length > 128) return undefined;
  const session = s.sessions.find(secret);
  return session ? { session, secret } : undefined;
}

/**
 * Refuses a write from a session that lacks its CSRF token: a cross-site form can make the browser
 * send the cookie (where SameSite does not stop it) but can never read or send this header.
 * @throws GatehouseError FORBIDDEN
 */
export function requireCsrf(session: Session, req: FastifyRequest): void {
  const header = req.headers['x-csrf-token'];
  if (!SessionBook.csrfMatches(session, typeof header === 'string' ? header : undefined)) {
    throw new GatehouseError(
      ErrorCode.FORBIDDEN,
      'A write from a Studio session must carry the session’s CSRF token in the X-CSRF-Token header (GET /v1/sessions/current answers it).',
    );
  }
}

/**
 * The principal of a request that carries a Studio session cookie and no Authorization header.
 * @throws GatehouseError UNAUTHENTICATED when the session is unknown, revoked or expired;
 * FORBIDDEN for a write without the session's CSRF token.
 */
export function sessionPrincipal(s: GatewayServices, req: FastifyRequest): Principal {
  const found = sessionOf(s, req);
  if (!found) {
    throw new GatehouseError(
      ErrorCode.UNAUTHENTICATED,
      'The Studio session has expired or was signed out: sign in again (or send "Authorization: Bearer <token>").',
    );
  }
  if (!SAFE_METHODS.has(req.method)) requireCsrf(found.session, req);
  return found.session.principal;
}

/** True when the request carries a session cookie (and so is authenticated by it, not a token). */
export function hasSessionCookie(req: FastifyRequest): boolean {
  return req.cookies[SESSION_COOKIE] !== undefined;
}
