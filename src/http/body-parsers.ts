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

/**
 * Refuses a request whose body is content-coded (gzip, deflate, br or any other coding but
 * `identity`), for the REST API and `/mcp` alike: the gateway does not decode bodies, so it will
 * not read compressed bytes as JSON, nor take on a decoder whose output (a zip bomb) the body
 * limit, counted on the bytes received, would not bound. Answered 415 with `Accept-Encoding:
 * identity`, as RFC 9110 §15.5.16 asks.
 */
export function refuseEncodedBodies(app: FastifyInstance): void {
  app.addHook('preParsing', (req, reply, payload, done) => {
    const coding = contentCoding(req.headers['content-encoding']);
    const length = req.headers['content-length'];
    const hasBody =
      req.headers['transfer-encoding'] !== undefined || (length !== undefined && length !== '0');
    if (coding === undefined || !hasBody) return done(null, payload);
    void reply.header('accept-encoding', 'identity');
    done(
      new GatehouseError(
        ErrorCode.UNSUPPORTED_MEDIA_TYPE,
        `The request body has Content-Encoding ${JSON.stringify(coding)}; this gateway reads only uncompressed bodies: send it without Content-Encoding (or as identity).`,
        { details: { header: 'Content-Encoding', encoding: coding } },
      ),
    );
  });
}

/** The coding a Content-Encoding header names, lower-cased; undefined for none or identity. */
function contentCoding(header: string | string[] | undefined): string | undefined {
  const coding = [header ?? []]
    .flat()
    .join(',')
    .split(',')
    .map((c) => c.trim().toLowerCase())
    .filter((c) => c !== '' && c !== 'identity')
    .join(', ');
  return coding === '' ? undefined : coding.slice(0, 100);
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
