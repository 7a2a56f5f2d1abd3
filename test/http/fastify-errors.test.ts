import Fastify from 'fastify';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ErrorCode, GatehouseError } from '../../src/core/index.js';
import { installBodyParsers } from '../../src/http/body-parsers.js';
import { translateFastifyError } from '../../src/http/fastify-errors.js';

/**
 * A real Fastify server with the gateway's body parsers, whose error handler answers what the
 * translation made of each error.
 */
let app: FastifyInstance;

beforeAll(async () => {
  app = Fastify({ bodyLimit: 64 });
  installBodyParsers(app, { maxJsonDepth: 8 });
  app.post('/echo', (req) => req.body);
  app.post('/throw', () => {
    throw new GatehouseError(ErrorCode.NOT_FOUND, 'ours');
  });
  app.post('/foreign', () => {
    throw new Error('secret internals');
  });
  app.setErrorHandler((err, _req, reply) => {
    const t = translateFastifyError(err, 'this place');
    void reply
      .code(200)
      .send(
        t instanceof GatehouseError
          ? { code: t.code, message: t.message }
          : { passed: t === err, message: (t as Error).message },
      );
  });
  await app.ready();
});
afterAll(() => app.close());

async function post(
  url: string,
  payload: string,
  contentType = 'application/json',
): Promise<Record<string, unknown>> {
  const res = await app.inject({
    method: 'POST',
    url,
    payload,
    headers: { 'content-type': contentType },
  });
  return res.json<Record<string, unknown>>();
}

describe('translateFastifyError', () => {
  it('an oversized body is PAYLOAD_TOO_LARGE, naming the place', async () => {
    expect(await post('/echo', JSON.stringify({ pad: 'x'.repeat(100) }))).toEqual({
      code: 'PAYLOAD_TOO_LARGE',
      message: 'The request body is larger than this place accepts.',
    });
  });

  it('bad JSON and an empty JSON body are INVALID_INPUT, a foreign media type UNSUPPORTED_MEDIA_TYPE, each said so', async () => {
    expect(await post('/echo', '{"a":')).toMatchObject({
      code: 'INVALID_INPUT',
      message: expect.stringMatching(/^The request body is not valid JSON: /) as unknown,
    });
    expect(await post('/echo', '')).toMatchObject({
      code: 'INVALID_INPUT',
      message: expect.stringMatching(/^The body is empty/) as unknown,
    });
    expect(await post('/echo', 'x', 'application/xml')).toMatchObject({
      code: 'UNSUPPORTED_MEDIA_TYPE',
      message: expect.stringMatching(/^Unsupported Content-Type/) as unknown,
    });
  });

  it('another client error of Fastify is INVALID_INPUT with its reason', () => {
    const mismatch = Object.assign(new Error('Request body size did not match Content-Length'), {
      code: 'FST_ERR_CTP_INVALID_CONTENT_LENGTH',
      statusCode: 400,
    });
    const t = translateFastifyError(mismatch, 'here');
    expect(t).toBeInstanceOf(GatehouseError);
    expect((t as GatehouseError).code).toBe('INVALID_INPUT');
    expect((t as GatehouseError).message).toBe(
      'The request is malformed: Request body size did not match Content-Length',
    );
  });

  it('passes our own errors and foreign ones through unchanged', async () => {
    expect(await post('/throw', '{}')).toEqual({ code: 'NOT_FOUND', message: 'ours' });
    expect(await post('/foreign', '{}')).toEqual({ passed: true, message: 'secret internals' });
    const proto = Object.assign(new Error('x'), { code: 'constructor' });
    expect(translateFastifyError(proto, 'here')).toBe(proto);
  });
});
