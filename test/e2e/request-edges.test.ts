import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDemoGateway } from '../helpers/gateway-fixture.js';
import type { DemoGateway, ErrorBody } from '../helpers/gateway-fixture.js';

/** Requests at the edges of the REST API, `/mcp` and the Studio: methods, cursors, encodings, bounds. */
let g: DemoGateway;
beforeAll(async () => {
  g = await startDemoGateway();
});
afterAll(() => g?.close());

async function send(
  method: string,
  url: string,
  o: { token?: string; headers?: Record<string, string>; payload?: string | Buffer } = {},
): Promise<{ status: number; headers: Record<string, unknown>; body: string }> {
  const res = await g.gateway.server.inject({
    method: method as 'GET',
    url,
    headers: {
      ...(o.token ? { authorization: `Bearer ${o.token}` } : {}),
      ...(o.payload !== undefined ? { 'content-type': 'application/json' } : {}),
      ...o.headers,
    },
    ...(o.payload !== undefined ? { payload: o.payload } : {}),
  });
  return { status: res.statusCode, headers: res.headers, body: res.body };
}

describe('a method a known path does not take', () => {
  it('answers 405 with Allow listing what the path takes, on REST routes, /mcp and the Studio', async () => {
    for (const [method, url, allow] of [
      ['PUT', '/v1/tools', 'GET, HEAD, OPTIONS'],
      ['DELETE', '/v1/invocations', 'GET, HEAD, OPTIONS, POST'],
      ['PATCH', '/v1/approvals/some-id', 'GET, HEAD, OPTIONS'],
      ['GET', '/v1/approvals/some-id/approve', 'OPTIONS, POST'],
      ['PUT', '/mcp', 'DELETE, GET, HEAD, OPTIONS, POST'],
      ['POST', '/studio/index.html', 'GET, HEAD, OPTIONS'],
      ['DELETE', '/healthz', 'GET, HEAD, OPTIONS'],
    ] as const) {
      const res = await send(method, url, { token: g.tokens.admin });
      expect(res.status, `${method} ${url}: ${res.body}`).toBe(405);
      expect(res.headers.allow, `${method} ${url}`).toBe(allow);
      const body = JSON.parse(res.body) as ErrorBody;
      expect(body.error.code).toBe('METHOD_NOT_ALLOWED');
      expect(body.error.message).toContain(`does not take ${method}; it takes ${allow}`);
      expect(body.error.details).toEqual({ method, allow: allow.split(', ') });
    }
  });

  it('answers OPTIONS with 204 and Allow, HEAD like GET, and an unknown path still 404', async () => {
    const options = await send('OPTIONS', '/v1/invocations/abc');
    expect(options.status).toBe(204);
    expect(options.headers.allow).toBe('GET, HEAD, OPTIONS');
    expect(options.body).toBe('');
    const head = await send('HEAD', '/healthz');
    expect(head.status).toBe(200);
    const headOfPost = await send('HEAD', '/v1/events', { token: g.tokens.admin });
    expect(headOfPost.status).toBe(405);
    expect(headOfPost.headers.allow).toBe('OPTIONS, POST');
    for (const method of ['GET', 'PUT', 'OPTIONS']) {
      const missing = await send(method, '/v1/no-such-thing');
      expect(missing.status, method).toBe(404);
      expect(missing.headers.allow).toBeUndefined();
    }
    // A path one segment longer than a route's is not that route's.
    expect((await send('PUT', '/v1/invocations/a/b')).status).toBe(404);
  });
});
