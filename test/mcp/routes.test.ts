import type { FastifyReply, FastifyRequest } from 'fastify';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { accessOf } from '../../src/http/access-table.js';
import { mcpServerRoutes } from '../../src/http/routes/mcp-server-routes.js';
import type { Route, RouteAnswer } from '../../src/http/route.js';
import type { Principal } from '../../src/tenancy/index.js';
import { McpHarness, TENANT } from './mcp-harness.js';

let h: McpHarness;
let published: unknown[];
let checked: unknown[];
/** What the registry's check of a publication throws, when set. */
let refuse: Error | null;
let routes: Route[];
beforeEach(async () => {
  h = await McpHarness.open();
  published = [];
  checked = [];
  refuse = null;
  routes = mcpServerRoutes({
    mcp: h.mcp,
    publish: (_tenant, events) => {
      published.push(...events);
      return Promise.resolve({ results: events.length });
    },
    checkPublish: (_tenant, events) => {
      checked.push(...events);
      return refuse ? Promise.reject(refuse) : Promise.resolve();
    },
  });
});
afterEach(async () => {
  await h.close();
});

const maintainer: Principal = {
  id: 'maint-1',
  tenant: TENANT,
  name: 'm',
  roles: ['maintainer'],
  project: null,
  agent: null,
};

async function send(method: string, url: string, params: Record<string, string>, body?: unknown) {
  const route = routes.find((r) => r.method === method && r.url === url)!;
  const answer = await route.handler(
    maintainer,
    { params, body, query: {} } as unknown as FastifyRequest,
    {} as FastifyReply,
    { reach: 'tenant', owner: null, token: null },
  );
  return answer as RouteAnswer;
}

describe('MCP server routes', () => {
  it('register, verify, bind (publishing the descriptor), activate, show', async () => {
    expect(accessOf('POST', '/v1/mcp-servers/:id/activate')!.roles).toEqual({
      maintainer: 'tenant',
      admin: 'tenant',
    });
    const up = h.upstream({
      tools: [{ name: 'greet', description: 'Hi.', inputSchema: { type: 'object' } }],
    });
    const created = await send(
      'POST',
      '/v1/mcp-servers',
      {},
      { name: 'fx', transport: up.transport },
    );
    expect(created.status).toBe(201);
    const id = (created.body as { id: string }).id;
    await send('POST', '/v1/mcp-servers/:id/verify', { id });
    const bound = await send(
      'POST',
      '/v1/mcp-servers/:id/bindings',
      { id },
      {
        tool: 'greet',
        class: 'read',
        descriptor: { id: 'fx.greet', version: '1.0.0' },
      },
    );
    expect(bound.status).toBe(201);
    expect(published).toEqual([
      expect.objectContaining({
        type: 'AssetReleasePublished',
        data: expect.objectContaining({ assetId: 'fx.greet', version: '1.0.0' }) as unknown,
      }),
    ]);
    await send('POST', '/v1/mcp-servers/:id/activate', { id });
    const shown = (await send('GET', '/v1/mcp-servers/:id', { id })).body as {
      server: { state: string };
      bindings: { tool: string; state: string }[];
    };
    expect(shown.server.state).toBe('active');
    expect(shown.bindings).toEqual([expect.objectContaining({ tool: 'greet', state: 'bound' })]);
    await expect(
      send('POST', '/v1/mcp-servers/:id/bindings', { id }, { tool: 'greet', class: 'root' }),
    ).rejects.toMatchObject({ code: 'INVALID_INPUT' });
  });

  it('a publication the registry would refuse stores no binding and publishes nothing', async () => {
    const up = h.upstream({
      tools: [{ name: 'greet', description: 'Hi.', inputSchema: { type: 'object' } }],
    });
    const created = await send(
      'POST',
      '/v1/mcp-servers',
      {},
      { name: 'fx', transport: up.transport },
    );
    const id = (created.body as { id: string }).id;
    await send('POST', '/v1/mcp-servers/:id/verify', { id });
    const body = { tool: 'greet', class: 'read', descriptor: { id: 'fx.greet', version: '1.0.0' } };
    refuse = Object.assign(new Error('published with other content'), { code: 'CONFLICT' });
    await expect(send('POST', '/v1/mcp-servers/:id/bindings', { id }, body)).rejects.toBe(refuse);
    expect(checked).toEqual([
      expect.objectContaining({
        type: 'AssetReleasePublished',
        data: expect.objectContaining({ assetId: 'fx.greet', version: '1.0.0' }) as unknown,
      }),
    ]);
    expect(published).toEqual([]);
    expect((await h.mcp.get(TENANT, id)).bindings).toEqual([]);

    await expect(
      send(
        'POST',
        '/v1/mcp-servers/:id/bindings',
        { id },
        { ...body, descriptor: { id: 'Fx Greet', version: '1' } },
      ),
    ).rejects.toMatchObject({ code: 'INVALID_INPUT', details: { pointer: '/descriptor/id' } });
    await expect(
      send(
        'POST',
        '/v1/mcp-servers/:id/bindings',
        { id },
        { ...body, descriptor: { id: 'fx.greet', version: 'v1' } },
      ),
    ).rejects.toMatchObject({ code: 'INVALID_INPUT', details: { pointer: '/descriptor/version' } });
    refuse = null;
    const bound = await send('POST', '/v1/mcp-servers/:id/bindings', { id }, body);
    expect(bound.status).toBe(201);
    expect(published).toHaveLength(1);
  });
});
