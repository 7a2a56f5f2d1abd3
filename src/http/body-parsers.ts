import { isUtf8 } from 'node:buffer';
import type { FastifyInstance } from 'fastify';
import { ErrorCode, GatehouseError, parseJsonText } from '../core/index.js';

/**
 * The one place request bodies become values, for the REST API and `/mcp` alike: JSON as I-JSON
 * (bounded nesting, finite numbers, unique member names, no `__proto__`; see `parseJsonText`) and
 * `text/plain` (Cedar policy text), both only as UTF-8. Anything else is refused by Fastify as an
 * unsupported media type.
 */
export function installBodyParsers(app: FastifyInstance, o: { maxJsonDepth: number }): void {
  app.removeContentTypeParser(['application/json', 'text/plain']);
  app.addContentTypeParser('application/json', { parseAs: 'buffer' }, (_req, body, done) => {
    try {
      const text = utf8Text(body as Buffer);
      if (text.trim() === '') {
        throw new GatehouseError(
          ErrorCode.INVALID_INPUT,
          'The body is empty but Content-Type is application/json: send a JSON body.',
        );
      }
      done(null, parseJsonText(text, 'The request body', o.maxJsonDepth));
    } catch (err) {
      done(err as Error, undefined);
    }
  });
  app.addContentTypeParser('text/plain', { parseAs: 'buffer' }, (_req, body, done) => {
    try {
      done(null, utf8Text(body as Buffer));
    } catch (err) {
      done(err as Error, undefined);
    }
  });
}

/** The body as text. @throws GatehouseError INVALID_INPUT when its bytes are not UTF-8. */
function utf8Text(body: Buffer): string {
  if (!isUtf8(body)) {
    throw new GatehouseError(
      ErrorCode.INVALID_INPUT,
      'The request body is not valid UTF-8: send JSON (or policy text) encoded as UTF-8.',
      { details: { rule: 'encoding' } },
    );
  }
  return body.toString('utf8');
}
