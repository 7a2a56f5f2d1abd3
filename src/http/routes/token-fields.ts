import { ErrorCode, GatehouseError } from '../../core/index.js';
import { optionalString } from '../request-parsing.js';

/** The OpenAPI properties of a token's expiry and label in a request body. */
export const TOKEN_EXPIRY_PROPERTIES = {
  ttl: { type: 'string', description: 'lifetime of the token: 90d, 12h, 30m (at most 366d)' },
  expiresAt: { type: 'string', description: 'or its expiry, ISO 8601 (instead of ttl)' },
  label: { type: 'string', description: 'where it is used (ci, laptop); at most 64 characters' },
} as const;

const LABEL = /^[\x20-\x7e]{1,64}$/;

/**
 * The `ttl`, `expiresAt` and `label` of a body, each when given.
 * @throws GatehouseError INVALID_INPUT naming the field.
 */
export function tokenExpiryFields(body: Record<string, unknown>): {
  ttl?: string;
  expiresAt?: string;
  label?: string;
} {
  const ttl = optionalString(body, 'ttl');
  const expiresAt = optionalString(body, 'expiresAt');
  const label = optionalString(body, 'label');
  if (label !== undefined && !LABEL.test(label))
    throw new GatehouseError(
      ErrorCode.INVALID_INPUT,
      '/label must be 1–64 printable ASCII characters.',
      { details: { pointer: '/label' } },
    );
  return {
    ...(ttl !== undefined ? { ttl } : {}),
    ...(expiresAt !== undefined ? { expiresAt } : {}),
    ...(label !== undefined ? { label } : {}),
  };
}
