import { ErrorCode, GatehouseError } from '../../core/index.js';
import {
  MAX_REASON_FIELD,
  intParam,
  objectBody,
  optionalText,
  stringField,
} from '../request-parsing.js';
import type { AccessTokens } from '../../tenancy/index.js';
import type { Route } from '../route.js';
import type { GatewayServices } from '../services.js';
import { TOKEN_EXPIRY_PROPERTIES, tokenExpiryFields } from './token-fields.js';

const tokenId = (req: { params: unknown }) => (req.params as { id: string }).id;

/** A body that may be absent (`{}`) or a JSON object. */
function optionalBody(body: unknown, what: string): Record<string, unknown> {
  return body === undefined || body === null ? {} : objectBody(body, what);
}

/**
 * Bearer tokens: list (never a secret), create (admins), revoke and rotate. Admins reach every
 * token of their tenant; any other principal its own (the access table's `own`).
 */
export function tokenRoutes(s: GatewayServices): Route[] {
  // Read when a request comes: the server is built before anything is asked of the directory.
  const tokens = (): AccessTokens => s.directory.tokens;
  return [
    {
      method: 'GET',
      url: '/v1/tokens',
      tag: 'tenancy',
      summary:
        "Bearer tokens, newest first (admins: the tenant's; others: their own): id, principal, roles, label, status, created, expires, last used (to the minute), revoked; never a secret",
      query: {
        principal: { type: 'string', description: 'only the tokens of this principal id' },
        limit: { type: 'integer', description: 'at most this many (default 100, max 500)' },
      },
      responses: { '200': '{tokens: [...]}' },
      handler: (principal, req, _reply, grant) => {
        const q = req.query as Record<string, string | undefined>;
        const limit = Math.min(500, intParam(q.limit, 'limit', 100));
        const list = tokens().list(principal.tenant, grant.owner, {
          limit,
          ...(q.principal !== undefined ? { principal: q.principal } : {}),
        });
        return { status: 200, body: { tokens: list } };
      },
    },
    {
      method: 'POST',
      url: '/v1/tokens',
      tag: 'tenancy',
      summary:
        'Make a new token for a principal of your tenant; its secret is in the answer, once. It expires after ttl, at expiresAt, or after the default lifetime',
      body: {
        type: 'object',
        required: ['principal'],
        properties: {
          principal: { type: 'string', description: 'the principal id' },
          ...TOKEN_EXPIRY_PROPERTIES,
        },
      },
      responses: {
        '201': '{token, secret}',
        '400': 'a bad ttl, expiry or label',
        '404': 'no such principal',
        '409': 'the principal holds as many active tokens as it may (20)',
      },
      handler: async (principal, req) => {
        const body = objectBody(req.body, 'POST /v1/tokens');
        const created = await tokens().create(
          principal.tenant,
          stringField(body, 'principal'),
          tokenExpiryFields(body),
          principal.id,
        );
        return { status: 201, body: created };
      },
    },
    {
      method: 'POST',
      url: '/v1/tokens/:id/revoke',
      tag: 'tenancy',
      summary:
        'Revoke a token at once: requests with it answer 401 and its open event streams and MCP sessions are closed. Safe to repeat',
      body: {
        type: 'object',
        properties: { reason: { type: 'string', maxLength: MAX_REASON_FIELD } },
      },
      responses: { '200': 'the token, revoked', '404': 'no such token (of yours)' },
      handler: async (principal, req, _reply, grant) => {
        const body = optionalBody(req.body, 'POST /v1/tokens/:id/revoke');
        const reason = optionalText(body, 'reason', MAX_REASON_FIELD) ?? '';
        return {
          status: 200,
          body: await tokens().revoke(
            principal.tenant,
            tokenId(req),
            grant.owner,
            principal.id,
            reason,
          ),
        };
      },
    },
    {
      method: 'POST',
      url: '/v1/tokens/:id/rotate',
      tag: 'tenancy',
      summary:
        'Replace a token by a new one (new id and secret, shown once); the old one stops working after overlapSeconds (default 0, at most 3600). Your own rotated token keeps its expiry; an admin may give a new one',
      body: {
        type: 'object',
        properties: {
          overlapSeconds: { type: 'integer', description: 'how long the old token keeps working' },
          ttl: TOKEN_EXPIRY_PROPERTIES.ttl,
          expiresAt: TOKEN_EXPIRY_PROPERTIES.expiresAt,
        },
      },
      responses: {
        '201': '{token, secret}',
        '403': 'a new expiry asked for your own token (admins only)',
        '404': 'no such token (of yours)',
        '409': 'not active, or rotated already',
      },
      handler: async (principal, req, _reply, grant) => {
        const body = optionalBody(req.body, 'POST /v1/tokens/:id/rotate');
        const overlap = body.overlapSeconds;
        if (overlap !== undefined && typeof overlap !== 'number')
          throw new GatehouseError(
            ErrorCode.INVALID_INPUT,
            '/overlapSeconds must be an integer from 0 to 3600.',
            { details: { pointer: '/overlapSeconds' } },
          );
        const { label: _label, ...expiry } = tokenExpiryFields(body);
        const rotated = await tokens().rotate(
          principal.tenant,
          tokenId(req),
          grant.owner,
          principal.id,
          {
            ...expiry,
            ...(overlap !== undefined ? { overlapSeconds: overlap } : {}),
          },
        );
        return { status: 201, body: rotated };
      },
    },
  ];
}
