import { deflateSync, gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDemoGateway } from '../helpers/gateway-fixture.js';
import type { DemoGateway, ErrorBody } from '../helpers/gateway-fixture.js';

/** Requests at the edges of the REST API, `/mcp` and the Studio: methods, cursors, encodings, bounds. */
let g: DemoGateway;
beforeAll(async () => {
  g = await startDemoGateway({ listen: true });
});
afterAll(() => g?.close());

async function send(
  method: string,
  url: string,
  o: { token?: string; headers?: Record<string, string>; payload?: string | Buffer } = {},
): Promise<{ status: number; headers: Record<string, unknown>; body: string }> {
  // Over a real socket: /mcp checks the Host against the address it listens on.
  const res = await fetch(`${g.url!}${url}`, {
    method,
    headers: {
      ...(o.token ? { authorization: `Bearer ${o.token}` } : {}),
      ...(o.payload !== undefined ? { 'content-type': 'application/json' } : {}),
      ...o.headers,
    },
    ...(o.payload === undefined
      ? {}
      : { body: typeof o.payload === 'string' ? o.payload : new Uint8Array(o.payload) }),
  });
  return {
    status: res.status,
    headers: Object.fromEntries(res.headers),
    body: await res.text(),
  };
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

describe('a pagination cursor', () => {
  async function get(url: string, token: string, headers: Record<string, string> = {}) {
    const res = await send('GET', url, { token, headers });
    return { status: res.status, body: JSON.parse(res.body) as ErrorBody };
  }

  it('refuses a malformed or unknown invocations cursor with a 400 naming it, and pages with a real one', async () => {
    for (const cursor of ['zzz', 'ffffffff-ffff-7fff-bfff-ffffffffffff']) {
      const res = await get(`/v1/invocations?cursor=${cursor}`, g.tokens.operator);
      expect(res.status, cursor).toBe(400);
      expect(res.body.error.code).toBe('INVALID_INPUT');
      expect(res.body.error.details).toEqual({ parameter: 'cursor' });
      expect(res.body.error.message).toMatch(/^Query parameter cursor names no invocation/);
    }
    for (const key of ['page-1', 'page-2'])
      await g.invoke(g.tokens.agent, key, {
        tool: { id: 'demo/echo', version: '1.0.0' },
        environment: 'dev',
        input: { message: key },
      });
    const first = await g.inject<{ invocations: { id: string }[]; nextCursor: string }>(
      'GET',
      '/v1/invocations?limit=1',
      { token: g.tokens.operator },
    );
    expect(first.body.nextCursor).toBe(first.body.invocations[0]!.id);
    const second = await g.inject<{ invocations: { id: string }[] }>(
      'GET',
      `/v1/invocations?limit=1&cursor=${first.body.nextCursor}`,
      { token: g.tokens.operator },
    );
    expect(second.status).toBe(200);
    expect(second.body.invocations[0]!.id < first.body.nextCursor).toBe(true);
  });

  it('refuses a cursor (or any parameter) on a list that takes none, naming it', async () => {
    for (const [url, token, takes] of [
      ['/v1/approvals?cursor=zzz', g.tokens.reviewer, 'it takes status'],
      ['/v1/tools?cursor=zzz', g.tokens.admin, 'it takes no query parameters'],
      ['/v1/mcp-servers?cursor=zzz', g.tokens.admin, 'it takes no query parameters'],
      ['/v1/uncertain?cursor=zzz', g.tokens.operator, 'it takes no query parameters'],
      ['/v1/audit/checkpoint?cursor=zzz', g.tokens.operator, 'it takes no query parameters'],
      ['/v1/tokens?cursor=zzz', g.tokens.admin, 'it takes principal, limit'],
      ['/v1/events/stream?cursor=zzz', g.tokens.operator, 'it takes after'],
    ] as const) {
      const res = await get(url, token);
      expect(res.status, url).toBe(400);
      expect(res.body.error.details, url).toEqual({ parameter: 'cursor' });
      expect(res.body.error.message, url).toContain(`Query parameter cursor is not one GET `);
      expect(res.body.error.message, url).toContain(takes);
    }
  });

  it('refuses a Last-Event-ID or after that is not an event id, or is past the newest event', async () => {
    const bad = await get('/v1/events/stream', g.tokens.operator, { 'last-event-id': 'zzz' });
    expect(bad.status).toBe(400);
    expect(bad.body.error.details).toEqual({ header: 'Last-Event-ID' });
    const ahead = await get('/v1/events/stream', g.tokens.operator, {
      'last-event-id': '999999999',
    });
    expect(ahead.status).toBe(400);
    expect(ahead.body.error.details).toEqual({ header: 'Last-Event-ID' });
    expect(ahead.body.error.message).toMatch(/past the newest event \(\d+\)/);
    const after = await get('/v1/events/stream?after=999999999', g.tokens.operator);
    expect(after.status).toBe(400);
    expect(after.body.error.details).toEqual({ parameter: 'after' });
  });
});

describe('a content-coded request body', () => {
  const invocation = JSON.stringify({
    tool: { id: 'demo/echo', version: '1.0.0' },
    environment: 'dev',
    input: { message: 'coded' },
  });

  it('is refused with 415 naming the coding, on the REST API and /mcp, whether or not the bytes are compressed', async () => {
    // A zip bomb: 1 KiB on the wire, 100 MiB decoded; never decoded.
    const bomb = gzipSync(Buffer.alloc(100 * 1024 * 1024, 0x20));
    const ran = g.executions('demo.echo');
    for (const [url, token, payload, coding] of [
      ['/v1/invocations', g.tokens.agent, invocation, 'gzip'],
      ['/v1/invocations', g.tokens.agent, gzipSync(invocation), 'gzip'],
      ['/v1/invocations', g.tokens.agent, deflateSync(invocation), 'deflate'],
      ['/v1/events', g.tokens.admin, bomb, 'gzip'],
      ['/v1/approvals/x/approve', g.tokens.reviewer, '{}', 'br'],
      ['/v1/invocations', g.tokens.agent, invocation, 'identity, x-made-up'],
      ['/mcp', g.tokens.agent, bomb, 'GZIP'],
    ] as const) {
      const res = await send('POST', url, {
        token,
        payload,
        headers: {
          'content-encoding': coding,
          'idempotency-key': `coded-${coding}`,
          ...(url === '/mcp' ? { accept: 'application/json, text/event-stream' } : {}),
        },
      });
      const named = coding.toLowerCase().replace('identity, ', '');
      expect(res.status, `${url} ${coding}: ${res.body}`).toBe(415);
      expect(res.headers['accept-encoding']).toBe('identity');
      expect(res.body).toContain(`Content-Encoding \\"${named}\\"`);
      const body = JSON.parse(res.body) as ErrorBody | { error: { data: { code: string } } };
      expect('data' in body.error ? body.error.data.code : body.error.code).toBe(
        'UNSUPPORTED_MEDIA_TYPE',
      );
    }
    expect(g.executions('demo.echo')).toBe(ran);
  });

  it('takes identity, and an empty body with a coding, as plain', async () => {
    const res = await send('POST', '/v1/invocations', {
      token: g.tokens.agent,
      payload: invocation,
      headers: { 'content-encoding': 'identity', 'idempotency-key': 'coded-identity' },
    });
    expect(res.status, res.body).toBe(200);
    const empty = await send('POST', '/v1/sessions/current', {
      token: g.tokens.admin,
      headers: { 'content-encoding': 'gzip', 'content-length': '0' },
    });
    expect(empty.status).not.toBe(415);
  });
});

describe('free text a person submits', () => {
  it('bounds approve and reject reasons at 2000 characters, naming the field and the bound', async () => {
    const waiting = await g.invoke(g.tokens.agent, 'reason-bound', {
      tool: { id: 'demo/propose-change', version: '1.0.0' },
      environment: 'dev',
      input: { title: 'Fix a typo', diff: '-teh\n+the\n' },
    });
    const id = (waiting.body as { approvalId?: string }).approvalId;
    expect(waiting.body.status, JSON.stringify(waiting.body)).toBe('awaiting_approval');
    for (const decision of ['approve', 'reject']) {
      const long = await g.inject<ErrorBody>('POST', `/v1/approvals/${id!}/${decision}`, {
        token: g.tokens.reviewer,
        body: { reason: 'r'.repeat(2001) },
      });
      expect(long.status, decision).toBe(400);
      expect(long.body.error.details).toEqual({ pointer: '/reason', maxLength: 2000 });
      expect(long.body.error.message).toBe(
        '/reason is 2001 characters long; it may be at most 2000.',
      );
      const nul = await g.inject<ErrorBody>('POST', `/v1/approvals/${id!}/${decision}`, {
        token: g.tokens.reviewer,
        body: { reason: 'a\u0000b' },
      });
      expect(nul.status).toBe(400);
      expect(nul.body.error.details).toEqual({ pointer: '/reason' });
    }
    const pending = await g.inject<{ status: string }>('GET', `/v1/approvals/${id!}`, {
      token: g.tokens.reviewer,
    });
    expect(pending.body.status).toBe('pending');
    const ok = await g.inject<{ status: string }>('POST', `/v1/approvals/${id!}/reject`, {
      token: g.tokens.reviewer,
      body: { reason: 'r'.repeat(2000) },
    });
    expect(ok.status, JSON.stringify(ok.body)).toBe(200);
  });

  it('bounds the reasons of token revocation and MCP server retirement, and resolution evidence', async () => {
    const token = await g.inject<ErrorBody>('POST', '/v1/tokens/no-such-token/revoke', {
      token: g.tokens.admin,
      body: { reason: 'r'.repeat(2001) },
    });
    expect(token.status).toBe(400);
    expect(token.body.error.details).toEqual({ pointer: '/reason', maxLength: 2000 });
    const retire = await g.inject<ErrorBody>('POST', '/v1/mcp-servers/no-such-server/retire', {
      token: g.tokens.admin,
      body: { reason: 'r'.repeat(2001) },
    });
    expect(retire.status).toBe(400);
    expect(retire.body.error.details).toEqual({ pointer: '/reason', maxLength: 2000 });
    const evidence = await g.inject<ErrorBody>('POST', '/v1/invocations/no-such-call/resolve', {
      token: g.tokens.operator,
      body: { effect: 'confirmed', evidence: { note: 'e'.repeat(16_000) } },
    });
    expect(evidence.status).toBe(400);
    expect(evidence.body.error.details).toEqual({ pointer: '/evidence', maxLength: 16_000 });
    expect(evidence.body.error.message).toMatch(/^\/evidence is 16011 characters long as JSON/);
    // Within the bounds, the same requests reach the lookup: no such thing.
    const small = await g.inject<ErrorBody>('POST', '/v1/invocations/no-such-call/resolve', {
      token: g.tokens.operator,
      body: { effect: 'confirmed', evidence: { note: 'checked the ticket' } },
    });
    expect(small.status).toBe(404);
  });
});
