import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ACCESS, registeredRoutes } from '../../src/http/index.js';
import type { RouteAccess, RouteKey } from '../../src/http/index.js';
import { reachOf } from '../../src/http/access.js';
import type { InvocationRecord } from '../../src/invocation/index.js';
import type { Principal } from '../../src/tenancy/index.js';
import { call, startDemoGateway } from '../helpers/gateway-fixture.js';
import type { DemoGateway } from '../helpers/gateway-fixture.js';

/**
 * The role × route authorization matrix, generated from the access table (ACCESS): every route
 * the gateway registers × every kind of caller gets exactly the answer the table gives it.
 *
 * - no token: 401 (public routes answer);
 * - a role the route does not name: 403 FORBIDDEN;
 * - a role it names: served. Where the route names a resource of the first agent (`agent`
 *   targets), a caller reaching only its own (the second agent; for tokens, any non-admin) gets
 *   404, with exactly the answer a resource that does not exist gets;
 * - another tenant's principal, of a role the route names: 404 for any resource of this tenant;
 *   a collection answers its own tenant's, never one of this tenant's ids.
 */

type Method = 'GET' | 'POST' | 'PUT' | 'DELETE';
interface Req {
  url: string;
  body?: unknown;
  headers?: Record<string, string>;
}

/** What a route's request is about. */
type Target =
  /** a resource of the first agent, named in the request (path, query or body) */
  | 'agent'
  /**
   * a record of the first agent named by its index in the tenant's log: another tenant's caller
   * is answered about its own log, never with this tenant's record
   */
  | 'agentIndex'
  /** a resource of the tenant that no agent owns */
  | 'tenant'
  /** nothing of this tenant's: a collection, or something the caller makes in its own tenant */
  | 'none';

interface Case {
  target: Target;
  /** The request; called once per caller, so a route that changes what it names gets a fresh one. */
  request: () => Promise<Req> | Req;
  /** The same request naming what does not exist, for comparing 404 answers. */
  missing?: () => Req;
  /** Ids of the first agent's that no one else reaching only its own may see in the answer. */
  private?: () => string[];
  /**
   * A public route that checks the caller itself (Studio sign-in): the status it answers each
   * caller, instead of the table's "served".
   */
  answers?: (c: Caller) => number;
}

interface Caller {
  name: string;
  token: string | undefined;
  principal: Principal | undefined;
  /** Of the tenant the resources are in. */
  home: boolean;
}

let g: DemoGateway;
let fx: {
  agentId: string;
  agent2: string;
  invocation: InvocationRecord;
  approvalId: string;
  ownAuditIndex: number;
  ownLeafHash: string;
  serverId: string;
  serverArgs: string[];
  others: Record<string, string>;
};
let fresh = 0;
const next = (prefix: string) => `${prefix}-${++fresh}`;

beforeAll(async () => {
  g = await startDemoGateway({ listen: true });
  const d = g.gateway.directory;
  const agentId = d.authenticate(g.tokens.agent)!.id;
  const agent2 = (
    await d.addPrincipal(
      {
        tenant: 'acme',
        name: 'second-agent',
        roles: ['agent'],
        project: 'web',
        agent: { id: 'demo-agent', version: '1.0.0' },
      },
      'test',
    )
  ).token;
  // Another tenant with one principal per role.
  await d.ensureTenant('globex', 'Globex', 'test');
  await d.ensureProject('globex', 'other', 'test');
  const others: Record<string, string> = {};
  for (const role of ['agent', 'reviewer', 'operator', 'maintainer', 'admin'] as const) {
    others[role] = (
      await d.addPrincipal(
        {
          tenant: 'globex',
          name: `globex-${role}`,
          roles: [role],
          ...(role === 'agent'
            ? { project: 'other', agent: { id: 'demo-agent', version: '1.0.0' } }
            : {}),
        },
        'test',
      )
    ).token;
  }
  const invoked = await g.invoke(g.tokens.agent, 'matrix-1', call('demo/echo', { message: 'm' }));
  expect(invoked.status).toBe(200);
  const gated = await g.invoke(
    g.tokens.agent,
    'matrix-gated',
    call('demo/propose-change', { title: 'matrix', diff: '-a\n+b' }),
  );
  expect(gated.status).toBe(202);
  await g.gateway.policy.replace('acme', 'web', 'permit (principal, action, resource);', 'test');
  await g.gateway.policy.replace(
    'globex',
    undefined,
    (await g.gateway.policy.read('acme'))!.text,
    'test',
  );
  await g.gateway.secrets.put('acme', 'matrix-secret', 'v', ['demo'], 'test');
  const [server] = await g.gateway.mcp.list('acme');
  const transport = server!.transport as { args: string[] };
  fx = {
    agentId,
    agent2,
    invocation: invoked.body,
    approvalId: gated.body.approvalId!,
    ownAuditIndex: invoked.body.audit!.index,
    ownLeafHash: (await g.gateway.auditLog.record('acme', invoked.body.audit!.index)).leafHash,
    serverId: server!.id,
    serverArgs: transport.args,
    others,
  };
}, 60_000);

afterAll(async () => {
  await g?.close();
});

let lastToken: string | undefined;
/**
 * A token of the first agent only for this request (revoke and rotate end it); the one made for
 * the request before is revoked, so the agent never holds more than its cap of active tokens.
 */
async function agentToken(): Promise<string> {
  const tokens = g.gateway.directory.tokens;
  if (lastToken) await tokens.revoke('acme', lastToken, null, 'test', 'matrix');
  lastToken = (await tokens.create('acme', fx.agentId, {}, 'test')).token.id;
  return lastToken;
}

/** A registered, not yet verified stdio server of the tenant (retire ends it). */
async function registeredServer(): Promise<string> {
  const s = await g.gateway.mcp.register('acme', 'test', {
    name: next('matrix-server'),
    transport: { type: 'stdio', command: process.execPath, args: [...fx.serverArgs, next('x')] },
  });
  return s.id;
}

/** An MCP session of the first agent (DELETE ends it). */
async function agentSession(): Promise<string> {
  const res = await send('POST', { url: '/mcp', body: initialize(), headers: MCP }, g.tokens.agent);
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return String(res.headers['mcp-session-id']);
}

function initialize(): unknown {
  return {
    jsonrpc: '2.0',
    id: 1,
    method: 'initialize',
    params: {
      protocolVersion: '2025-06-18',
      capabilities: {},
      clientInfo: { name: 'matrix', version: '1' },
    },
  };
}

const MCP = { accept: 'application/json, text/event-stream' };

/** A fresh Studio session of the reviewer: its cookie and CSRF token, as request headers. */
async function reviewerSession(): Promise<Record<string, string>> {
  const res = await fetch(`${g.url!}/v1/sessions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${g.tokens.reviewer}` },
  });
  expect(res.status).toBe(201);
  const { csrfToken } = (await res.json()) as { csrfToken: string };
  const cookie = res.headers.get('set-cookie')!.split(';')[0]!;
  return { cookie, 'x-csrf-token': csrfToken };
}

/** One case per route of the access table. */
function cases(): Record<RouteKey, Case> {
  const inv = () => fx.invocation.id;
  return {
    'POST /v1/events': {
      target: 'none',
      request: () => ({
        url: '/v1/events',
        body: {
          id: next('matrix-release'),
          type: 'AgentReleasePublished',
          data: {
            agentId: next('matrix-agent'),
            version: '1.0.0',
            closure: [],
            policy: { maxClass: 'read' },
          },
        },
      }),
    },
    'POST /v1/tools/import-openapi': {
      target: 'none',
      request: () => ({
        url: '/v1/tools/import-openapi',
        body: {
          document: {
            openapi: '3.1.0',
            info: { title: 'matrix', version: '1' },
            servers: [{ url: 'https://matrix.example' }],
            paths: { '/m': { get: { operationId: 'getM', responses: {} } } },
          },
          idPrefix: 'matrix',
          version: '1.0.0',
          select: ['getM'],
          dryRun: true,
        },
      }),
    },
    'GET /v1/tools': { target: 'none', request: () => ({ url: '/v1/tools' }) },
    'GET /v1/agent-releases': { target: 'none', request: () => ({ url: '/v1/agent-releases' }) },
    'POST /v1/invocations': {
      target: 'none',
      request: () => ({
        url: '/v1/invocations',
        body: call('demo/echo', { message: 'x' }),
        headers: { 'idempotency-key': next('matrix-key') },
      }),
    },
    'GET /v1/invocations': {
      target: 'none',
      // Filters the first agent's call matches: narrowing holds under them too.
      request: () => ({
        url: `/v1/invocations?limit=500&tool=demo%2Fecho&agent=demo-agent&environment=dev&from=${encodeURIComponent(fx.invocation.createdAt)}`,
      }),
      private: () => [inv()],
    },
    'GET /v1/invocations/:id': {
      target: 'agent',
      request: () => ({ url: `/v1/invocations/${inv()}` }),
      missing: () => ({ url: '/v1/invocations/no-such-id' }),
    },
    'GET /v1/invocations/:id/receipt': {
      target: 'agent',
      request: () => ({ url: `/v1/invocations/${inv()}/receipt` }),
      missing: () => ({ url: '/v1/invocations/no-such-id/receipt' }),
    },
    'GET /v1/receipt-keys': { target: 'none', request: () => ({ url: '/v1/receipt-keys' }) },
    'GET /v1/audit/checkpoint': {
      target: 'none',
      request: () => ({ url: '/v1/audit/checkpoint' }),
    },
    'GET /v1/audit/proof': {
      target: 'agentIndex',
      request: () => ({ url: `/v1/audit/proof?index=${fx.ownAuditIndex}` }),
      missing: () => ({ url: '/v1/audit/proof?index=999999' }),
    },
    'GET /v1/audit/consistency': {
      target: 'none',
      request: () => ({ url: '/v1/audit/consistency?from=1&to=2' }),
    },
    'GET /v1/audit/records/:index': {
      target: 'agentIndex',
      request: () => ({ url: `/v1/audit/records/${fx.ownAuditIndex}` }),
      missing: () => ({ url: '/v1/audit/records/999999' }),
    },
    'GET /v1/policies/tenant': { target: 'none', request: () => ({ url: '/v1/policies/tenant' }) },
    'PUT /v1/policies/tenant': {
      target: 'none',
      request: async () => ({
        url: '/v1/policies/tenant',
        body: { text: (await g.gateway.policy.read('acme'))!.text },
      }),
    },
    'GET /v1/policies/projects/:project': {
      target: 'tenant',
      request: () => ({ url: '/v1/policies/projects/web' }),
    },
    'PUT /v1/policies/projects/:project': {
      target: 'tenant',
      request: () => ({
        url: '/v1/policies/projects/web',
        body: { text: 'permit (principal, action, resource);' },
      }),
    },
    'GET /v1/approvals': {
      target: 'none',
      request: () => ({ url: '/v1/approvals' }),
      private: () => [fx.approvalId, inv()],
    },
    'GET /v1/approvals/:id': {
      target: 'agent',
      request: () => ({ url: `/v1/approvals/${fx.approvalId}` }),
      missing: () => ({ url: '/v1/approvals/no-such-id' }),
    },
    'POST /v1/approvals/:id/approve': {
      target: 'agent',
      request: () => ({ url: `/v1/approvals/${fx.approvalId}/approve`, body: { reason: 'ok' } }),
    },
    'POST /v1/approvals/:id/reject': {
      target: 'agent',
      request: () => ({ url: `/v1/approvals/${fx.approvalId}/reject`, body: { reason: 'no' } }),
    },
    'GET /v1/uncertain': { target: 'none', request: () => ({ url: '/v1/uncertain' }) },
    'POST /v1/invocations/:id/resolve': {
      target: 'agent',
      request: () => ({
        url: `/v1/invocations/${inv()}/resolve`,
        body: { effect: 'denied', evidence: 'matrix' },
      }),
    },
    'GET /v1/events/stream': { target: 'none', request: () => ({ url: '/v1/events/stream' }) },
    'GET /v1/principals': {
      target: 'none',
      request: () => ({ url: '/v1/principals' }),
    },
    'POST /v1/principals': {
      target: 'none',
      request: () => ({ url: '/v1/principals', body: { name: next('p'), roles: ['reviewer'] } }),
    },
    'GET /v1/tokens': {
      target: 'none',
      request: () => ({ url: '/v1/tokens?limit=500' }),
      private: () =>
        [...g.gateway.directory.tokens.list('acme', fx.agentId, { limit: 500 })].map((t) => t.id),
    },
    'POST /v1/tokens': {
      target: 'agent',
      request: () => ({ url: '/v1/tokens', body: { principal: fx.agentId, ttl: '1h' } }),
    },
    'POST /v1/tokens/:id/revoke': {
      target: 'agent',
      request: async () => ({ url: `/v1/tokens/${await agentToken()}/revoke` }),
      missing: () => ({ url: '/v1/tokens/no-such-id/revoke' }),
    },
    'POST /v1/tokens/:id/rotate': {
      target: 'agent',
      request: async () => ({ url: `/v1/tokens/${await agentToken()}/rotate` }),
      missing: () => ({ url: '/v1/tokens/no-such-id/rotate' }),
    },
    'GET /v1/secrets': { target: 'none', request: () => ({ url: '/v1/secrets' }) },
    'PUT /v1/secrets/:name': {
      target: 'none',
      request: () => ({ url: '/v1/secrets/matrix-put', body: { value: 'v', scopes: ['demo'] } }),
    },
    'POST /v1/secrets/:name/rotate': {
      target: 'tenant',
      request: () => ({ url: '/v1/secrets/matrix-secret/rotate', body: { value: 'w' } }),
    },
    'DELETE /v1/secrets/:name': {
      target: 'tenant',
      request: async () => {
        const name = next('matrix-doomed');
        await g.gateway.secrets.put('acme', name, 'v', ['demo'], 'test');
        return { url: `/v1/secrets/${name}` };
      },
    },
    'GET /v1/mcp-servers': { target: 'none', request: () => ({ url: '/v1/mcp-servers' }) },
    'GET /v1/mcp-servers/:id': {
      target: 'tenant',
      request: () => ({ url: `/v1/mcp-servers/${fx.serverId}` }),
    },
    'POST /v1/mcp-servers': {
      target: 'none',
      request: () => ({
        url: '/v1/mcp-servers',
        body: { name: next('m'), transport: { type: 'http', url: 'http://127.0.0.1:1/mcp' } },
      }),
    },
    'POST /v1/mcp-servers/:id/verify': {
      target: 'tenant',
      request: async () => ({ url: `/v1/mcp-servers/${await registeredServer()}/verify` }),
    },
    'POST /v1/mcp-servers/:id/activate': {
      target: 'tenant',
      request: () => ({ url: `/v1/mcp-servers/${fx.serverId}/activate` }),
    },
    'POST /v1/mcp-servers/:id/retire': {
      target: 'tenant',
      request: async () => ({ url: `/v1/mcp-servers/${await registeredServer()}/retire` }),
    },
    'POST /v1/mcp-servers/:id/bindings': {
      target: 'tenant',
      request: () => ({
        url: `/v1/mcp-servers/${fx.serverId}/bindings`,
        body: {
          tool: 'get-tiny-image',
          class: 'read',
          descriptor: { id: next('matrix/tiny'), version: '1.0.0' },
        },
      }),
    },
    'POST /v1/mcp-servers/:id/bindings/:tool/reapprove': {
      target: 'tenant',
      request: () => ({ url: `/v1/mcp-servers/${fx.serverId}/bindings/echo/reapprove` }),
    },
    'POST /mcp': {
      target: 'none',
      request: () => ({ url: '/mcp', body: initialize(), headers: MCP }),
    },
    'DELETE /mcp': {
      target: 'agent',
      request: async () => ({
        url: '/mcp',
        headers: { ...MCP, 'mcp-session-id': await agentSession() },
      }),
      missing: () => ({
        url: '/mcp',
        headers: { ...MCP, 'mcp-session-id': '00000000-0000-4000-8000-000000000000' },
      }),
    },
    'GET /mcp': {
      target: 'agent',
      request: async () => ({
        url: '/mcp',
        headers: {
          ...MCP,
          'mcp-session-id': await agentSession(),
          'mcp-protocol-version': '2025-06-18',
        },
      }),
      missing: () => ({
        url: '/mcp',
        headers: { ...MCP, 'mcp-session-id': '00000000-0000-4000-8000-000000000000' },
      }),
    },
    'POST /v1/sessions': {
      target: 'none',
      request: () => ({ url: '/v1/sessions' }),
      answers: (c) => (!c.principal ? 401 : c.principal.roles.includes('agent') ? 403 : 201),
    },
    // The session routes read the cookie, whatever token comes with it: a reviewer's session.
    'GET /v1/sessions/current': {
      target: 'none',
      request: async () => ({ url: '/v1/sessions/current', headers: await reviewerSession() }),
    },
    'DELETE /v1/sessions/current': {
      target: 'none',
      request: async () => ({ url: '/v1/sessions/current', headers: await reviewerSession() }),
    },
    'GET /studio': { target: 'none', request: () => ({ url: '/studio' }) },
    'GET /studio/*': { target: 'none', request: () => ({ url: '/studio/approvals' }) },
    'GET /healthz': { target: 'none', request: () => ({ url: '/healthz' }) },
    'GET /readyz': { target: 'none', request: () => ({ url: '/readyz' }) },
    'GET /metrics': { target: 'none', request: () => ({ url: '/metrics' }) },
    'GET /openapi.json': { target: 'none', request: () => ({ url: '/openapi.json' }) },
    // This gateway has no authorization server: the metadata is absent for everyone alike.
    'GET /.well-known/oauth-protected-resource': {
      target: 'none',
      request: () => ({ url: '/.well-known/oauth-protected-resource' }),
      answers: () => 404,
    },
    'GET /.well-known/oauth-protected-resource/mcp': {
      target: 'none',
      request: () => ({ url: '/.well-known/oauth-protected-resource/mcp' }),
      answers: () => 404,
    },
  };
}

function callers(): Caller[] {
  const home = (name: string, token: string): Caller => ({
    name,
    token,
    principal: g.gateway.directory.authenticate(token)!,
    home: true,
  });
  return [
    home('agent', g.tokens.agent),
    home('reviewer', g.tokens.reviewer),
    home('operator', g.tokens.operator),
    home('maintainer', g.tokens.maintainer),
    home('admin', g.tokens.admin),
    home('second agent', fx.agent2),
    { name: 'no token', token: undefined, principal: undefined, home: true },
    ...Object.entries(fx.others).map(([role, token]) => ({
      name: `globex ${role}`,
      token,
      principal: g.gateway.directory.authenticate(token)!,
      home: false,
    })),
  ];
}

/** One request over a real socket; a stream is answered by its status and headers, then closed. */
async function send(
  method: Method,
  r: Req,
  token: string | undefined,
): Promise<{ status: number; body: unknown; headers: Record<string, string> }> {
  const controller = new AbortController();
  const res = await fetch(`${g.url!}${r.url}`, {
    method,
    headers: {
      ...(token !== undefined ? { authorization: `Bearer ${token}` } : {}),
      ...(r.body !== undefined ? { 'content-type': 'application/json' } : {}),
      ...r.headers,
    },
    ...(r.body !== undefined ? { body: JSON.stringify(r.body) } : {}),
    signal: controller.signal,
  });
  const headers = Object.fromEntries(res.headers.entries());
  if (headers['content-type']?.startsWith('text/event-stream')) {
    controller.abort();
    return { status: res.status, body: '', headers };
  }
  const text = await res.text();
  let body: unknown = text;
  try {
    body = JSON.parse(text);
  } catch {
    // not JSON
  }
  return { status: res.status, body, headers };
}

/** The answer a caller must get: what the table says of it on that route. */
function expected(
  access: RouteAccess,
  c: Caller,
  target: Target,
): 'served' | 401 | 403 | 'not-found' | 'own-log' {
  if (access.roles === 'public') return 'served';
  if (!c.principal) return 401;
  const reach = reachOf(access, c.principal);
  if (reach === null) return 403;
  if (target === 'none') return 'served';
  if (!c.home) return target === 'agentIndex' ? 'own-log' : 'not-found';
  if (target !== 'tenant' && reach === 'own' && c.principal.id !== fx.agentId) return 'not-found';
  return 'served';
}

/** The error code of a REST error body, or of a JSON-RPC refusal of /mcp. */
function errorCode(body: unknown): string | undefined {
  const error = (body as { error?: { code?: unknown; data?: { code?: string } } }).error;
  return typeof error?.code === 'string' ? error.code : error?.data?.code;
}

/** The message with the ids of a request removed, to compare two 404 answers. */
function shape(body: unknown, ...ids: string[]): string {
  let text = JSON.stringify(body);
  // Longest first, so an id inside another (an index inside a UUID) cannot spoil it.
  for (const id of [...ids].sort((x, y) => y.length - x.length)) text = text.split(id).join('ID');
  return text.replace(/no-such-id|999999|00000000-0000-4000-8000-000000000000/g, 'ID');
}

describe('the role × route authorization matrix (from the access table)', () => {
  it('covers every route the gateway registers, and the table names no other', () => {
    const registered = registeredRoutes(g.gateway.server)
      .filter((r) => r.method !== 'HEAD')
      .map((r) => `${r.method} ${r.url}`);
    const table = Object.keys(ACCESS);
    expect([...new Set(registered)].sort()).toEqual([...table].sort());
    expect(Object.keys(cases()).sort()).toEqual([...table].sort());
    // Every HEAD route Fastify adds beside a GET is reached through the GET's entry.
    for (const r of registeredRoutes(g.gateway.server).filter((x) => x.method === 'HEAD'))
      expect(table, r.url).toContain(`GET ${r.url}`);
  });

  const keys = Object.keys(ACCESS) as RouteKey[];
  it.each(keys)('%s', async (key) => {
    const access: RouteAccess = ACCESS[key];
    const c = cases()[key];
    const method = key.slice(0, key.indexOf(' ')) as Method;
    const failures: string[] = [];
    for (const caller of callers()) {
      const want = expected(access, caller, c.target);
      const req = await c.request();
      const res = await send(method, req, caller.token);
      const got = `${res.status} ${JSON.stringify(res.body).slice(0, 300)}`;
      const code = errorCode(res.body);
      if (c.answers) {
        if (res.status !== c.answers(caller))
          failures.push(`${caller.name}: want ${c.answers(caller)}, got ${got}`);
        continue;
      }
      switch (want) {
        case 401:
          if (res.status !== 401) failures.push(`${caller.name}: want 401, got ${got}`);
          break;
        case 403:
          if (res.status !== 403 || code !== 'FORBIDDEN')
            failures.push(`${caller.name}: want 403 FORBIDDEN, got ${got}`);
          break;
        case 'not-found': {
          if (res.status !== 404 || code !== 'NOT_FOUND') {
            failures.push(`${caller.name}: want 404, got ${got}`);
            break;
          }
          // The same answer a resource that does not exist gets: existence never shows.
          if (c.missing && caller.home) {
            const absent = await send(method, c.missing(), caller.token);
            const ids = [fx.invocation.id, fx.approvalId, String(fx.ownAuditIndex)];
            const named = /\/v1\/tokens\/([^/]+)\//.exec(req.url)?.[1];
            const session = req.headers?.['mcp-session-id'];
            if (named) ids.push(named);
            if (session) ids.push(session);
            if (absent.status !== 404 || shape(res.body, ...ids) !== shape(absent.body))
              failures.push(
                `${caller.name}: its 404 differs from a missing one's: ${got} vs ${JSON.stringify(absent.body)}`,
              );
          }
          break;
        }
        case 'own-log':
          if ([401, 403].includes(res.status) || res.status >= 500)
            failures.push(`${caller.name}: want an answer about its own log, got ${got}`);
          if (JSON.stringify(res.body).includes(fx.ownLeafHash))
            failures.push(`${caller.name}: got this tenant's record`);
          break;
        case 'served': {
          if ([401, 403, 404].includes(res.status) || res.status >= 500) {
            failures.push(`${caller.name}: want it served, got ${got}`);
            break;
          }
          const reach = caller.principal ? reachOf(access, caller.principal) : null;
          const narrowed = !caller.home || (reach === 'own' && caller.principal?.id !== fx.agentId);
          if (c.private && narrowed) {
            const text = JSON.stringify(res.body);
            for (const id of c.private())
              if (text.includes(id)) failures.push(`${caller.name}: the answer shows ${id}`);
          }
        }
      }
    }
    expect(failures).toEqual([]);
  });
});

describe('what an agent owns', () => {
  it("an agent's lists hold its own only: invocations, approvals, tools of its closure, its release", async () => {
    const a2 = await g.invoke(fx.agent2, 'matrix-a2', call('demo/echo', { message: 'a2' }));
    expect(a2.status).toBe(200);
    const mine = (await send('GET', { url: '/v1/invocations?limit=500' }, fx.agent2)).body as {
      invocations: InvocationRecord[];
    };
    expect(mine.invocations.map((i) => i.id)).toContain(a2.body.id);
    expect(new Set(mine.invocations.map((i) => i.principal))).toEqual(
      new Set([g.gateway.directory.authenticate(fx.agent2)!.id]),
    );
    const approvals = (await send('GET', { url: '/v1/approvals' }, g.tokens.agent)).body as {
      approvals: { id: string; requestedBy: string }[];
    };
    expect(approvals.approvals.map((a) => a.id)).toContain(fx.approvalId);
    expect(new Set(approvals.approvals.map((a) => a.requestedBy))).toEqual(new Set([fx.agentId]));
    const releases = (await send('GET', { url: '/v1/agent-releases' }, g.tokens.agent)).body as {
      releases: { agentId: string; version: string }[];
    };
    expect(releases.releases.map((r) => `${r.agentId}@${r.version}`)).toEqual(['demo-agent@1.0.0']);
    const tools = (await send('GET', { url: '/v1/tools' }, g.tokens.agent)).body as {
      tools: { id: string; version: string }[];
    };
    const closure = g.gateway.registry.agentRelease('acme', 'demo-agent', '1.0.0')!.release.closure;
    expect(tools.tools.map((t) => `${t.id}@${t.version}`).sort()).toEqual(
      closure.map((t) => `${t.id}@${t.version}`).sort(),
    );
  });

  it("an agent's invocations hold its own under every filter and on every page; another tenant's hold none of these", async () => {
    const first = fx.invocation;
    const own = await g.invoke(fx.agent2, 'matrix-filters', call('demo/echo', { message: 'f' }));
    expect(own.status).toBe(200);
    const agent2 = g.gateway.directory.authenticate(fx.agent2)!.id;
    const range = `from=${encodeURIComponent(first.createdAt)}&to=${encodeURIComponent(new Date(Date.parse(own.body.createdAt) + 1).toISOString())}`;
    const filters = [
      '',
      'status=observed',
      'tool=demo%2Fecho',
      'tool=demo%2Fecho&toolVersion=1.0.0',
      // Both agents act as demo-agent: the agent filter does not widen an agent's reach.
      'agent=demo-agent',
      'environment=dev',
      range,
      `status=observed&tool=demo%2Fecho&toolVersion=1.0.0&agent=demo-agent&environment=dev&${range}`,
    ];
    /** Every page of the list, two at a time, following nextCursor. */
    const all = async (filter: string, token: string) => {
      const found: InvocationRecord[] = [];
      let cursor: string | null = null;
      for (let page = 0; page < 200; page++) {
        const url = `/v1/invocations?limit=2&${filter}${cursor ? `&cursor=${cursor}` : ''}`;
        const res = await send('GET', { url }, token);
        expect(res.status, `${url}: ${JSON.stringify(res.body)}`).toBe(200);
        const body = res.body as { invocations: InvocationRecord[]; nextCursor: string | null };
        found.push(...body.invocations);
        cursor = body.nextCursor;
        if (cursor === null) return found;
      }
      throw new Error(`${filter}: more than 200 pages`);
    };
    for (const filter of filters) {
      const tenantWide = (await all(filter, g.tokens.operator)).map((i) => i.id);
      expect(tenantWide, filter).toEqual(expect.arrayContaining([first.id, own.body.id]));
      expect(new Set(tenantWide).size, filter).toBe(tenantWide.length);
      const mine = await all(filter, fx.agent2);
      expect(
        mine.map((i) => i.id),
        filter,
      ).toContain(own.body.id);
      expect(new Set(mine.map((i) => i.principal)), filter).toEqual(new Set([agent2]));
      for (const role of ['agent', 'operator'] as const) {
        const theirs = JSON.stringify(await all(filter, fx.others[role]!));
        expect(theirs, `${role} of globex, ${filter}`).not.toContain(first.id);
        expect(theirs, `${role} of globex, ${filter}`).not.toContain(own.body.id);
      }
    }
  });

  it("an audit record of the tenant's lifecycle, or of another agent's call, is answered as missing", async () => {
    const lifecycle = await send('GET', { url: '/v1/audit/records/0' }, g.tokens.agent);
    expect(lifecycle.status).toBe(404);
    expect((await send('GET', { url: '/v1/audit/records/0' }, g.tokens.operator)).status).toBe(200);
    const other = await send('GET', { url: `/v1/audit/records/${fx.ownAuditIndex}` }, fx.agent2);
    expect(other.status).toBe(404);
    const absent = await send('GET', { url: '/v1/audit/records/999999' }, fx.agent2);
    expect(shape(other.body, String(fx.ownAuditIndex))).toBe(shape(absent.body));
    const own = await send('GET', { url: `/v1/audit/records/${fx.ownAuditIndex}` }, g.tokens.agent);
    expect((own.body as { record: { subject: string } }).record.subject).toBe(
      `invocation/${fx.invocation.id}`,
    );
  });

  it("another agent's approval id resumes nothing and tells nothing: 404 as if it did not exist", async () => {
    const body = call('demo/propose-change', { title: 'matrix', diff: '-a\n+b' });
    const res = await g.invoke(fx.agent2, 'matrix-steal', {
      ...(body as object),
      approvalId: fx.approvalId,
    });
    const missing = await g.invoke(fx.agent2, 'matrix-steal-2', {
      ...(body as object),
      approvalId: 'no-such-id',
    });
    expect(res.status).toBe(404);
    expect(shape(res.body, fx.approvalId)).toBe(shape(missing.body));
    expect(JSON.stringify(res.body)).not.toContain('requestHash');
  });
});
