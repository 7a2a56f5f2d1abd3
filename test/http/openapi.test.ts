import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GatewayMetrics, buildServer } from '../../src/http/index.js';
import type { GatewayServices } from '../../src/http/index.js';
import { undocumentedRoutes } from '../../src/http/openapi.js';
import { startDemoGateway } from '../helpers/gateway-fixture.js';
import type { DemoGateway } from '../helpers/gateway-fixture.js';

type Paths = Record<string, Record<string, { summary: string; security?: unknown[] }>>;

/** Services enough to build the server: its routes only reach them when they answer. */
const services = {
  secrets: {},
  mcp: {},
  metrics: new GatewayMetrics(),
} as unknown as GatewayServices;

describe('the OpenAPI document', () => {
  let g: DemoGateway;
  let paths: Paths;
  beforeAll(async () => {
    g = await startDemoGateway();
    const res = await g.inject<{ paths: Paths }>('GET', '/openapi.json');
    expect(res.status).toBe(200);
    paths = res.body.paths;
  });
  afterAll(async () => {
    await g?.close();
  });

  it('describes /mcp, /healthz, /readyz, /metrics and itself, the public ones without a token', () => {
    expect(Object.keys(paths['/mcp']!).sort()).toEqual(['delete', 'get', 'post']);
    for (const path of ['/healthz', '/readyz', '/metrics', '/openapi.json'])
      expect(paths[path]?.get?.security, path).toEqual([]);
  });

  it("names only routes the gateway serves (Fastify's own route table)", () => {
    const documented = Object.entries(paths).flatMap(([path, ops]) =>
      Object.keys(ops).map((m) => ({
        method: m.toUpperCase(),
        url: path.replace(/\{(\w+)\}/g, ':$1'),
      })),
    );
    expect(documented.length).toBeGreaterThan(30);
    const missing = documented.filter(
      (r) => !g.gateway.server.hasRoute({ method: r.method, url: r.url }),
    );
    expect(missing).toEqual([]);
  });

  it('documents the filters of GET /v1/invocations, each of which the route accepts', async () => {
    const op = paths['/v1/invocations']!.get as unknown as {
      parameters: { name: string; in: string; description: string }[];
      responses: Record<string, unknown>;
    };
    const names = op.parameters.filter((p) => p.in === 'query').map((p) => p.name);
    expect(names.sort()).toEqual(
      [
        'agent',
        'cursor',
        'environment',
        'from',
        'limit',
        'status',
        'to',
        'tool',
        'toolVersion',
      ].sort(),
    );
    expect(Object.keys(op.responses)).toEqual(expect.arrayContaining(['200', '400']));
    // A cursor is the id of a call the caller can see: the one call made here.
    const made = await g.invoke(g.tokens.agent, 'openapi-cursor', {
      tool: { id: 'demo/echo', version: '1.0.0' },
      environment: 'dev',
      input: { message: 'x' },
    });
    const example: Record<string, string> = {
      status: 'observed',
      tool: 'demo/echo',
      toolVersion: '1.0.0',
      agent: 'demo-agent',
      environment: 'dev',
      from: '2026-01-01T00:00:00Z',
      to: '2099-01-01',
      limit: '5',
      cursor: made.body.id,
    };
    const query = new URLSearchParams(
      names.map((n): [string, string] => [n, example[n]!]),
    ).toString();
    const res = await g.inject<{ invocations: unknown[]; nextCursor: unknown }>(
      'GET',
      `/v1/invocations?${query}`,
      { token: g.tokens.operator },
    );
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body).toEqual({ invocations: [], nextCursor: null });
    const undocumented = await g.inject<{ error: { details: unknown } }>(
      'GET',
      '/v1/invocations?principal=x',
      { token: g.tokens.operator },
    );
    expect(undocumented.status).toBe(400);
    expect(undocumented.body.error.details).toEqual({ parameter: 'principal' });
  });

  it('answers the operational routes as before', async () => {
    expect((await g.inject('GET', '/healthz')).body).toEqual({ status: 'ok' });
    // Not listening: the gateway is not ready, and says so with 503.
    const readyz = await g.inject('GET', '/readyz');
    expect(readyz.status).toBe(503);
    expect(readyz.body).toMatchObject({ status: 'starting or stopping' });
    const metrics = await g.inject('GET', '/metrics');
    expect(metrics.headers['content-type']).toBe('text/plain; version=0.0.4');
    expect(metrics.body).toContain('# TYPE');
  });
});

describe('every route the server registers is in the document', () => {
  it('a server with all its routes starts; one with an undescribed route refuses to, naming it', async () => {
    const complete = buildServer({ services, version: 'test' });
    await expect(complete.ready()).resolves.toBeDefined();
    await complete.close();

    const extended = buildServer({ services, version: 'test' });
    extended.get('/v1/undescribed/:id', () => ({}));
    extended.post('/healthz', () => ({}));
    await expect(extended.ready()).rejects.toThrow(
      /Routes missing from \/openapi\.json: GET \/v1\/undescribed\/:id, HEAD \/v1\/undescribed\/:id, POST \/healthz\./,
    );
    await extended.close();
  });

  it('undocumentedRoutes matches path parameters and counts HEAD as GET', () => {
    const doc = { paths: { '/v1/things/{id}': { get: {} }, '/x': { post: {} } } };
    expect(
      undocumentedRoutes(doc, [
        { method: 'GET', url: '/v1/things/:id' },
        { method: 'HEAD', url: '/v1/things/:id' },
        { method: 'POST', url: '/x' },
        { method: 'GET', url: '/x' },
        { method: 'DELETE', url: '/v1/things/:id' },
      ]),
    ).toEqual(['GET /x', 'DELETE /v1/things/:id']);
  });
});
