import { ErrorCode, GatehouseError } from '../core/index.js';

/**
 * What Fastify's own body and URL errors (INVALID_INPUT) mean to a client, by code. Bad or
 * empty JSON never reaches here: `installBodyParsers` replaces Fastify's JSON parser with ours.
 */
const BODY_ERRORS: ReadonlyMap<string, string> = new Map([
  [
    'FST_ERR_MAX_PARAM_LENGTH',
    'A path parameter is longer than this gateway accepts (100 characters); no id is that long.',
  ],
  ['FST_ERR_BAD_URL', 'The path is not a valid URL: a percent-escape in it does not decode.'],
]);

/**
 * Fastify's own errors (body too large, bad JSON, wrong media type, another client error) as our
 * codes with messages a client can act on; a `GatehouseError` and anything else pass through
 * unchanged (foreign → INTERNAL at the edge). Shared by the REST API and `/mcp`.
 * @param where what the body limit belongs to, as the too-large message names it (`/mcp`).
 */
export function translateFastifyError(err: unknown, where: string): unknown {
  if (err instanceof GatehouseError) return err;
  const e = err as { code?: string; statusCode?: number; message?: string };
  if (e.code === 'FST_ERR_CTP_BODY_TOO_LARGE')
    return new GatehouseError(
      ErrorCode.PAYLOAD_TOO_LARGE,
      `The request body is larger than ${where} accepts.`,
    );
  // A body in a form the gateway does not read is 415, as a content-coded one is (body-parsers).
  if (e.code === 'FST_ERR_CTP_INVALID_MEDIA_TYPE')
    return new GatehouseError(
      ErrorCode.UNSUPPORTED_MEDIA_TYPE,
      'Unsupported Content-Type: send application/json (text/plain only for Cedar policy text).',
      { details: { header: 'Content-Type' } },
    );
  const known = e.code === undefined ? undefined : BODY_ERRORS.get(e.code);
  if (known !== undefined) return new GatehouseError(ErrorCode.INVALID_INPUT, known);
  if (typeof e.statusCode === 'number' && e.statusCode >= 400 && e.statusCode < 500)
    return new GatehouseError(
      ErrorCode.INVALID_INPUT,
      `The request is malformed: ${e.message ?? 'no reason given'}`,
    );
  return err;
}
