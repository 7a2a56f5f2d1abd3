import { ErrorCode, GatehouseError } from '../../core/index.js';
import type { SecretService } from '../../secrets/index.js';
import { objectBody } from '../request-parsing.js';
import type { Route } from '../route.js';

/**
 * Secrets of the caller's tenant (admins only): list metadata, put, rotate, delete. No route ever
 * answers with a value.
 */
export function secretRoutes(s: { secrets: SecretService }): Route[] {
  const nameOf = (params: unknown) => (params as { name: string }).name;
  const valueOf = (body: Record<string, unknown>) => {
    if (typeof body.value !== 'string') {
      throw new GatehouseError(ErrorCode.INVALID_INPUT, '/value must be a non-empty string.', {
        details: { pointer: '/value' },
      });
    }
    return body.value;
  };
  return [
    {
      method: 'GET',
      url: '/v1/secrets',
      tag: 'secrets',
      summary: "Your tenant's secrets: name, version, scopes, createdAt (never a value)",
      responses: { '200': '{secrets: [{name, version, scopes, createdAt}]}' },
      handler: async (principal) => ({
        status: 200,
        body: { secrets: await s.secrets.list(principal.tenant) },
      }),
    },
    {
      method: 'PUT',
      url: '/v1/secrets/:name',
      tag: 'secrets',
      summary: 'Store a new version of a secret with its scopes (sealed with AES-256-GCM at once)',
      body: {
        type: 'object',
        required: ['value', 'scopes'],
        properties: {
          value: { type: 'string', minLength: 1, description: 'at most 64 KiB of UTF-8' },
          scopes: { type: 'array', minItems: 1, items: { type: 'string' } },
        },
      },
      responses: {
        '200': '{name, version, scopes, createdAt}',
        '400': 'bad name, value or scopes',
        '409': 'changed concurrently; retry',
      },
      handler: async (principal, req) => {
        const body = objectBody(req.body, 'PUT /v1/secrets/:name');
        if (!Array.isArray(body.scopes)) {
          throw new GatehouseError(
            ErrorCode.INVALID_INPUT,
            '/scopes must be a non-empty list of scopes (e.g. ["github:read"]).',
            { details: { pointer: '/scopes' } },
          );
        }
        return {
          status: 200,
          body: await s.secrets.put(
            principal.tenant,
            nameOf(req.params),
            valueOf(body),
            body.scopes as string[],
            principal.id,
          ),
        };
      },
    },
    {
      method: 'POST',
      url: '/v1/secrets/:name/rotate',
      tag: 'secrets',
      summary: 'Store a new value of an existing secret, keeping its scopes',
      body: {
        type: 'object',
        required: ['value'],
        properties: { value: { type: 'string', minLength: 1 } },
      },
      responses: {
        '200': '{name, version, scopes, createdAt}',
        '404': 'no such secret',
        '409': 'changed or deleted concurrently; retry',
      },
      handler: async (principal, req) => ({
        status: 200,
        body: await s.secrets.rotate(
          principal.tenant,
          nameOf(req.params),
          valueOf(objectBody(req.body, 'POST /v1/secrets/:name/rotate')),
          principal.id,
        ),
      }),
    },
    {
      method: 'DELETE',
      url: '/v1/secrets/:name',
      tag: 'secrets',
      summary: 'Delete every version of a secret; calls that need it then fail closed',
      responses: { '204': 'deleted', '404': 'no such secret' },
      handler: async (principal, req) => {
        await s.secrets.delete(principal.tenant, nameOf(req.params), principal.id);
        return { status: 204, body: null };
      },
    },
  ];
}
