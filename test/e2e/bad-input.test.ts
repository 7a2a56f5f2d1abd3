import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDemoGateway } from '../helpers/gateway-fixture.js';
import type { DemoGateway, ErrorBody, InjectAnswer } from '../helpers/gateway-fixture.js';

let g: DemoGateway;
beforeAll(async () => {
  g = await startDemoGateway({ listen: true });
});
afterAll(() => g?.close());

const deep = (n: number) => `${'['.repeat(n)}${']'.repeat(n)}`;
const invocation = (input: string) =>
  `{"tool":{"id":"demo/echo","version":"1.0.0"},"environment":"dev","input":${input}}`;
let keys = 0;

function invoke(raw: string | Buffer, headers: Record<string, string> = {}) {
  return g.gateway.server
    .inject({
      method: 'POST',
      url: '/v1/invocations',
      headers: {
        authorization: `Bearer ${g.tokens.agent}`,
        'content-type': 'application/json',
        'idempotency-key': `bad-${keys++}`,
        ...headers,
      },
      payload: raw,
    })
    .then((r) => ({ status: r.statusCode, body: r.json<ErrorBody>() }));
}

/** A release event publishing a copy of demo/echo whose input schema is `schema` (raw JSON). */
const publication = (version: string, schema: string, extra = '') =>
  `{"id":"pub-${version}","type":"AssetReleasePublished"${extra},"data":{"assetId":"fuzz/echo","version":"${version}","inFlightPolicy":"finish","descriptor":{"id":"fuzz/echo","version":"${version}","kind":"native","description":"d","inputSchema":${schema},"sideEffect":{"class":"read"},"execution":{"handler":"demo.echo"}}}}`;

function publish(raw: string): Promise<InjectAnswer<ErrorBody>> {
  return g.inject<ErrorBody>('POST', '/v1/events', { token: g.tokens.admin, rawBody: raw });
}

function expectRefusal(
  a: { status: number; body: ErrorBody },
  pointer: string,
  rule: string,
): void {
  expect(a.status, JSON.stringify(a.body)).toBe(400);
  expect(a.body.error.code).toBe('INVALID_INPUT');
  expect(a.body.error.details).toEqual({ pointer, rule });
  expect(a.body.error.message).toContain(pointer === '' ? 'at its top' : `at ${pointer}`);
}

describe('bad JSON gets a 4xx naming where, never a 500', () => {
  it('refuses 10,000-deep nesting and 1e400 in an input, with the pointer', async () => {
    expectRefusal(await invoke(invocation(deep(10_000))), `/input${'/0'.repeat(63)}`, 'depth');
    expectRefusal(
      await invoke(invocation('{"message":"x","n":[1,1e400]}')),
      '/input/n/1',
      'number',
    );
    expectRefusal(await invoke(invocation('{"message":-1E+999}')), '/input/message', 'number');
    // Within the bounds the same call runs.
    const ok = await invoke(invocation(`{"message":"fine"}`));
    expect(ok.status).toBe(200);
  });

  it('refuses 1e400 in a descriptor and in an event sequence, and deep events', async () => {
    expectRefusal(
      await publish(publication('1.0.0', '{"type":"object","maximum":1e400}')),
      '/data/descriptor/inputSchema/maximum',
      'number',
    );
    expectRefusal(
      await publish(publication('1.0.1', '{"type":"object"}', ',"sequence":1e400')),
      '/sequence',
      'number',
    );
    // The 65th container: the outer array, the event, data, descriptor, then 61 arrays.
    expectRefusal(
      await publish(`[${publication('1.0.2', deep(100))}]`),
      `/0/data/descriptor/inputSchema${'/0'.repeat(60)}`,
      'depth',
    );
    // A sane publication still applies.
    const fine = await publish(publication('1.0.3', '{"type":"object"}', ',"sequence":3'));
    expect(fine.status, JSON.stringify(fine.body)).toBe(200);
  });

  it('refuses repeated member names, __proto__ and lone surrogates', async () => {
    expectRefusal(
      await invoke(
        '{"tool":{"id":"demo/echo","version":"1.0.0"},"environment":"dev","input":{"message":"a","message":"b"}}',
      ),
      '/input/message',
      'duplicate',
    );
    expectRefusal(
      await invoke(invocation('{"__proto__":{"admin":true}}')),
      '/input/__proto__',
      'proto',
    );
    const policy = await g.inject<ErrorBody>('PUT', '/v1/policies/tenant', {
      token: g.tokens.admin,
      rawBody: '{"text":"permit(principal,action,resource);\\ud800"}',
    });
    expectRefusal(policy, '/text', 'surrogate');
  });

  it('refuses bodies that are not UTF-8, empty, or of another media type', async () => {
    const latin1 = await invoke(Buffer.from('{"message":"caf\xe9"}', 'latin1'));
    expect(latin1.status).toBe(400);
    expect(latin1.body.error.message).toMatch(/not valid UTF-8/);
    const empty = await invoke('');
    expect(empty.status).toBe(400);
    expect(empty.body.error.message).toMatch(/body is empty/);
    const xml = await invoke('<a/>', { 'content-type': 'application/xml' });
    expect(xml.status).toBe(415);
    expect(xml.body.error.code).toBe('UNSUPPORTED_MEDIA_TYPE');
    expect(xml.body.error.message).toMatch(/Unsupported Content-Type/);
  });

  it('answers odd paths and queries in the error shape: bad escapes, long ids, arrays', async () => {
    const badEscape = await g.inject<ErrorBody>('GET', '/v1/invocations/%zz', {
      token: g.tokens.operator,
    });
    expect(badEscape.status).toBe(400);
    expect(badEscape.body.error.code).toBe('INVALID_INPUT');
    const long = await g.inject<ErrorBody>('GET', `/v1/invocations/${'a'.repeat(5000)}`, {
      token: g.tokens.operator,
    });
    expect(long.status).toBe(400);
    expect(long.body.error.message).toMatch(/longer than this gateway accepts/);
    expect(JSON.stringify(long.body).length).toBeLessThan(1000);
    const nul = await g.inject<ErrorBody>('GET', '/v1/invocations/%00', {
      token: g.tokens.operator,
    });
    expect(nul.status).toBe(400);
    expect(nul.body.error.message).toMatch(/path parameter id holds the NUL character/);
    const nulFilter = await g.inject<ErrorBody>('GET', '/v1/invocations?status=x%00', {
      token: g.tokens.operator,
    });
    expect(nulFilter.status).toBe(400);
    expect(nulFilter.body.error.details).toEqual({ query: 'status' });
    const nulName = await g.inject<ErrorBody>('POST', '/v1/principals', {
      token: g.tokens.admin,
      body: { name: 'a\u0000b', roles: ['reviewer'] },
    });
    expect(nulName.status).toBe(400);
    expect(nulName.body.error.details).toEqual({ pointer: '/name' });
    const array = await g.inject<ErrorBody>('GET', '/v1/audit/proof?index=1&index=2&size=3', {
      token: g.tokens.operator,
    });
    expect(array.status).toBe(400);
    const missing = await g.inject<ErrorBody>('GET', `/${'x'.repeat(20_000)}`);
    expect(missing.status).toBe(404);
    expect(missing.body.error.message.length).toBeLessThan(400);
  });

  it('names the member that must be an object, not the body or its Content-Type', async () => {
    for (const [tool, got] of [
      ['"demo/echo@1.0.0"', 'got a string'],
      ['[1]', 'got an array'],
      ['null', 'got null'],
    ]) {
      const a = await invoke(`{"tool":${tool},"environment":"dev","input":{"message":"x"}}`);
      expect(a.status).toBe(400);
      expect(a.body.error.details).toEqual({ pointer: '/tool' });
      expect(a.body.error.message).toBe(`/tool must be an object {"id": …, "version": …}; ${got}.`);
    }
    const missing = await invoke('{"environment":"dev","input":{"message":"x"}}');
    expect(missing.body.error.message).toMatch(/^\/tool must be an object .*; it is missing\.$/);
    const binding = await g.inject<ErrorBody>('POST', '/v1/mcp-servers/any/bindings', {
      token: g.tokens.maintainer,
      body: { tool: 't', class: 'read', descriptor: 'x' },
    });
    expect(binding.status).toBe(400);
    expect(binding.body.error.details).toEqual({ pointer: '/descriptor' });
    expect(binding.body.error.message).toMatch(/^\/descriptor must be an object .*got a string/);
  });

  it('refuses a string field longer than its bound, and a role named twice', async () => {
    const long = await invoke(
      JSON.stringify({
        tool: { id: `demo/${'x'.repeat(300)}`, version: '1.0.0' },
        environment: 'dev',
        input: { message: 'x' },
      }),
    );
    expect(long.status).toBe(400);
    expect(long.body.error.details).toEqual({ pointer: '/tool/id', maxLength: 256 });
    expect(long.body.error.message).toBe('/tool/id is 305 characters long; it may be at most 256.');
    const env = await invoke(
      JSON.stringify({
        tool: { id: 'demo/echo', version: '1.0.0' },
        environment: 'd'.repeat(10_000),
        input: {},
      }),
    );
    expect(env.body.error.details).toEqual({ pointer: '/environment', maxLength: 256 });
    const name = await g.inject<ErrorBody>('POST', '/v1/principals', {
      token: g.tokens.admin,
      body: { name: 'n'.repeat(100_000), roles: ['reviewer'] },
    });
    expect(name.status).toBe(400);
    expect(name.body.error.details).toEqual({ pointer: '/name', maxLength: 256 });
    const roles = await g.inject<ErrorBody>('POST', '/v1/principals', {
      token: g.tokens.admin,
      body: { name: 'twice', roles: ['reviewer', 'admin', 'reviewer'] },
    });
    expect(roles.status).toBe(400);
    expect(roles.body.error.details).toEqual({ pointer: '/roles/2' });
    expect(roles.body.error.message).toMatch(/names reviewer more than once/);
  });

  it('says whether a malformed integer was in the query, the path or a header', async () => {
    const query = await g.inject<ErrorBody>('GET', '/v1/tokens?limit=-5', {
      token: g.tokens.admin,
    });
    expect(query.status).toBe(400);
    expect(query.body.error.message).toMatch(/^Query parameter limit must be a non-negative/);
    expect(query.body.error.details).toEqual({ parameter: 'limit' });
    const path = await g.inject<ErrorBody>('GET', '/v1/audit/records/1e309', {
      token: g.tokens.admin,
    });
    expect(path.status).toBe(400);
    expect(path.body.error.message).toMatch(/^Path parameter index must be a non-negative/);
    expect(path.body.error.details).toEqual({ parameter: 'index' });
    const header = await g.inject<ErrorBody>('GET', '/v1/events/stream', {
      token: g.tokens.admin,
      headers: { 'last-event-id': `x${'9'.repeat(5000)}` },
    });
    expect(header.status).toBe(400);
    expect(header.body.error.message).toMatch(/^Header Last-Event-ID must be a non-negative/);
    expect(header.body.error.details).toEqual({ header: 'Last-Event-ID' });
    // A long value is shown cut, not echoed whole.
    expect(header.body.error.message.length).toBeLessThan(300);
  });

  it('refuses deep and overflowing input over a socket too, naming where', async () => {
    const post = async (input: string) => {
      const res = await fetch(`${g.url!}/v1/invocations`, {
        method: 'POST',
        headers: {
          authorization: `Bearer ${g.tokens.agent}`,
          'content-type': 'application/json',
          'idempotency-key': `bad-socket-${keys++}`,
        },
        body: invocation(input),
      });
      return { status: res.status, body: (await res.json()) as ErrorBody };
    };
    expectRefusal(await post(deep(10_000)), `/input${'/0'.repeat(63)}`, 'depth');
    expectRefusal(await post('{"message":1e400}'), '/input/message', 'number');
    expect((await fetch(`${g.url!}/healthz`)).status).toBe(200);
  });

  it('refuses the same JSON at /mcp, over a socket, as a JSON-RPC error', async () => {
    const post = async (body: string) => {
      const res = await fetch(`${g.url!}/mcp`, {
        method: 'POST',
        headers: {
          authorization: `Bearer ${g.tokens.agent}`,
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
        },
        body,
      });
      return {
        status: res.status,
        body: (await res.json()) as { error: { message: string; data: { code: string } } },
      };
    };
    const deepParams = await post(
      `{"jsonrpc":"2.0","id":1,"method":"initialize","params":${deep(10_000)}}`,
    );
    expect(deepParams.status).toBe(400);
    expect(deepParams.body.error.data.code).toBe('INVALID_INPUT');
    expect(deepParams.body.error.message).toMatch(
      /at \/params(\/0)+: objects and arrays nest deeper/,
    );
    const hugeId = await post('{"jsonrpc":"2.0","id":1e400,"method":"ping"}');
    expect(hugeId.status).toBe(400);
    expect(hugeId.body.error.message).toMatch(/at \/id: the number 1e400/);
  });

  it('answers requests Node cannot parse in the error shape: headers too large, not HTTP', async () => {
    const port = Number(new URL(g.url!).port);
    const raw = (text: string) =>
      new Promise<{ status: number; body: ErrorBody; headers: string }>((resolve, reject) => {
        const socket = connect(port, '127.0.0.1', () => socket.write(text));
        const chunks: Buffer[] = [];
        socket.on('data', (d: Buffer) => chunks.push(d));
        socket.on('error', reject);
        socket.on('close', () => {
          const answer = Buffer.concat(chunks).toString('utf8');
          const cut = answer.indexOf('\r\n\r\n');
          resolve({
            status: Number(/^HTTP\/1\.1 (\d{3})/.exec(answer)?.[1]),
            headers: answer.slice(0, cut),
            body: JSON.parse(answer.slice(cut + 4)) as ErrorBody,
          });
        });
      });
    const huge = await raw(
      `GET /v1/tools HTTP/1.1\r\nhost: x\r\nx-big: ${'a'.repeat(20_000)}\r\n\r\n`,
    );
    expect(huge.status).toBe(431);
    expect(huge.body.error.code).toBe('INVALID_INPUT');
    expect(huge.body.error.message).toMatch(/larger than this gateway accepts .*shorten the URL/);
    expect(huge.headers).toMatch(/content-type: application\/json/);
    const longUrl = await raw(`GET /${'a'.repeat(20_000)} HTTP/1.1\r\nhost: x\r\n\r\n`);
    expect(longUrl.status).toBe(431);
    expect(longUrl.body.error.code).toBe('INVALID_INPUT');
    const spaced = await raw('GET /v1/audit/records/ 1 HTTP/1.1\r\nhost: x\r\n\r\n');
    expect(spaced.status).toBe(400);
    expect(spaced.body.error.code).toBe('INVALID_INPUT');
    expect(spaced.body.error.message).toMatch(/not valid HTTP\/1\.1.*request line/);
    expect((await fetch(`${g.url!}/healthz`)).status).toBe(200);
  });
});
