import type { FastifyReply, FastifyRequest } from 'fastify';
import { ErrorCode, GatehouseError } from '../../core/index.js';
import type { Session } from '../../tenancy/index.js';
import { bearerPrincipal } from '../bearer.js';
import { SESSION_COOKIE, requireCsrf, sessionOf } from '../session-auth.js';
import type { Route } from '../route.js';
import type { GatewayServices } from '../services.js';

/** What the session routes answer: who is signed in, until when, and the CSRF token for writes. */
function sessionBody(s: Session) {
  const { principal: p } = s;
  return {
    principal: { id: p.id, name: p.name, tenant: p.tenant, roles: p.roles },
    expiresAt: s.expiresAt,
    csrfToken: s.csrfToken,
  };
}

/** The cookie's attributes: HttpOnly, SameSite=Strict, Secure when the request came over TLS. */
function cookieOptions(req: FastifyRequest, maxAgeSeconds: number) {
  return {
    path: '/',
    httpOnly: true,
    sameSite: 'strict' as const,
    secure: req.protocol === 'https',
    maxAge: maxAgeSeconds,
  };
}

function clearCookie(req: FastifyRequest, reply: FastifyReply): void {
  void reply.clearCookie(SESSION_COOKIE, cookieOptions(req, 0));
}

/**
 * Studio sign-in (DESIGN §11): a person's bearer token exchanged for an HttpOnly session cookie,
 * the session read back (for its CSRF token after a reload), and sign-out.
 */
export function sessionRoutes(s: GatewayServices): Route[] {
  return [
    {
      method: 'POST',
      url: '/v1/sessions',
      tag: 'sessions',
      summary:
        'Sign in to the Studio: the bearer token of a reviewer, operator, maintainer or admin (never an agent) is exchanged for an HttpOnly, SameSite=Strict session cookie',
      headers: {
        Authorization: { description: 'Bearer <token> of the person signing in', required: true },
      },
      responses: {
        '201': '{principal, expiresAt, csrfToken}; Set-Cookie gatehouse_session',
        '401': 'no valid token',
        '403': 'an agent token',
      },
      handler: (_principal, req, reply) => {
        const proved = bearerPrincipal(s.directory, req.headers.authorization);
        const opened = s.sessions.open(proved.principal, proved.token);
        void reply.setCookie(
          SESSION_COOKIE,
          opened.secret,
          cookieOptions(req, opened.maxAgeSeconds),
        );
        void reply.header('cache-control', 'no-store');
        return { status: 201, body: sessionBody(opened) };
      },
    },
    {
      method: 'GET',
      url: '/v1/sessions/current',
      tag: 'sessions',
      summary: 'The Studio session of this cookie: who is signed in, until when, its CSRF token',
      responses: { '200': '{principal, expiresAt, csrfToken}', '401': 'not signed in' },
      handler: (_principal, req, reply) => {
        const found = sessionOf(s, req);
        if (!found) {
          clearCookie(req, reply);
          throw new GatehouseError(
            ErrorCode.UNAUTHENTICATED,
            'Not signed in (or the session expired): sign in with your token.',
          );
        }
        void reply.header('cache-control', 'no-store');
        return { status: 200, body: sessionBody(found.session) };
      },
    },
    {
      method: 'DELETE',
      url: '/v1/sessions/current',
      tag: 'sessions',
      summary: 'Sign out: the session is revoked and its cookie cleared (send X-CSRF-Token)',
      headers: {
        'X-CSRF-Token': { description: 'the session’s CSRF token', required: true },
      },
      responses: { '204': 'signed out', '403': 'no CSRF token' },
      handler: (_principal, req, reply) => {
        const found = sessionOf(s, req);
        if (found) {
          requireCsrf(found.session, req);
          s.sessions.revoke(found.secret);
        }
        clearCookie(req, reply);
        return { status: 204, body: undefined };
      },
    },
  ];
}
