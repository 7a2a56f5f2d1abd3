import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/core/index.js';
import type { TokenInfo } from '../../src/tenancy/index.js';
import { call, startDemoGateway } from '../helpers/gateway-fixture.js';
import type { DemoGateway } from '../helpers/gateway-fixture.js';
import { SseClient } from '../helpers/sse.js';
import { storedRows } from '../helpers/stored-rows.js';

/** A real HTTP request to a listening gateway; the body parsed as JSON when it is JSON. */
async function http<T = Record<string, unknown>>(
  g: DemoGateway,
  method: string,
  path: string,
  token?: string,
  body?: unknown,
  headers: Record<string, string> = {},
): Promise<{ status: number; body: T }> {
  const res = await fetch(`${g.url!}${path}`, {
    method,
    headers: {
      ...(token !== undefined ? { authorization: `Bearer ${token}` } : {}),
      ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
      ...headers,
    },
    ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
  });
  const text = await res.text();
  let parsed: unknown = text;
  try {
    parsed = JSON.parse(text);
  } catch {
    // not JSON
  }
  return { status: res.status, body: parsed as T };
}

type ErrorAnswer = { error: { code: string; message: string; details: Record<string, unknown> } };
type NewToken = { token: TokenInfo; secret: string };

const sha256 = (s: string) => createHash('sha256').update(s).digest('hex');

/** An initialize request of /mcp, as a client sends it. */
const INITIALIZE = {
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: {
    protocolVersion: '2025-06-18',
    capabilities: {},
    clientInfo: { name: 'tokens-test', version: '1.0.0' },
  },
};
const MCP_HEADERS = { accept: 'application/json, text/event-stream' };

/** The open /mcp sessions, as /metrics says. */
async function mcpSessions(g: DemoGateway): Promise<number> {
  const text = (await http<string>(g, 'GET', '/metrics')).body;
  return Number(/^gatehouse_mcp_sessions (\d+)$/m.exec(text)?.[1] ?? NaN);
}

describe('bearer tokens over HTTP', () => {
  let g: DemoGateway;
  let agentId: string;
  beforeAll(async () => {
    g = await startDemoGateway({ listen: true, config: { tokenTtlMs: 7 * 24 * 3600 * 1000 } });
    agentId = g.gateway.directory.authenticate(g.tokens.agent)!.id;
  });
  afterAll(async () => {
    await g?.close();
  });

  /** A new token of the demo agent, made by the admin. */
  async function agentToken(extra: Record<string, unknown> = {}): Promise<NewToken> {
    const made = await http<NewToken>(g, 'POST', '/v1/tokens', g.tokens.admin, {
      principal: agentId,
      ...extra,
    });
    expect(made.status, JSON.stringify(made.body)).toBe(201);
    return made.body;
  }

  it('every token has an expiry: the configured default, a ttl, or expiresAt; bad ones are 400 naming the field', async () => {
    const before = Date.now();
    const plain = await agentToken();
    const week = 7 * 24 * 3600 * 1000;
    const expires = Date.parse(plain.token.expiresAt);
    expect(expires).toBeGreaterThanOrEqual(before + week);
    expect(expires).toBeLessThanOrEqual(Date.now() + week);
    expect(plain.secret).toMatch(/^gh_[A-Za-z0-9_-]{43}$/);
    expect(plain.token).toMatchObject({
      principal: { id: agentId, roles: ['agent'] },
      status: 'active',
      lastUsedAt: null,
    });

    const hours = await agentToken({ ttl: '12h', label: 'ci' });
    expect(Date.parse(hours.token.expiresAt) - Date.parse(hours.token.createdAt)).toBe(
      12 * 3600 * 1000,
    );
    expect(hours.token.label).toBe('ci');
    const at = new Date(Date.now() + 3 * 24 * 3600 * 1000).toISOString();
    expect((await agentToken({ expiresAt: at })).token.expiresAt).toBe(at);

    // The demo's tokens live a year, and expire too.
    const demo = await http<{ tokens: TokenInfo[] }>(g, 'GET', '/v1/tokens', g.tokens.agent);
    const seeded = demo.body.tokens.find((t) => t.label === 'demo')!;
    expect(Date.parse(seeded.expiresAt) - Date.parse(seeded.createdAt)).toBe(365 * 86_400_000);

    for (const [body, pointer] of [
      [{ ttl: '12' }, '/ttl'],
      [{ ttl: '400d' }, '/ttl'],
      [{ expiresAt: 'tomorrow' }, '/expiresAt'],
      [{ expiresAt: '2001-01-01T00:00:00Z' }, '/expiresAt'],
      [{ ttl: '1d', expiresAt: at }, '/ttl'],
      [{ label: 'x'.repeat(65) }, '/label'],
    ] as const) {
      const bad = await http<ErrorAnswer>(g, 'POST', '/v1/tokens', g.tokens.admin, {
        principal: agentId,
        ...body,
      });
      expect(bad.status, JSON.stringify(body)).toBe(400);
      expect(bad.body.error.details.pointer, JSON.stringify(body)).toBe(pointer);
    }
    const nobody = await http<ErrorAnswer>(g, 'POST', '/v1/tokens', g.tokens.admin, {
      principal: 'no-such-principal',
    });
    expect(nobody.status).toBe(404);
  });

  it('an expired token gets 401 saying when it expired; its open event stream and MCP session are closed', async () => {
    const short = await agentToken({ ttl: '3s' });
    const stream = await SseClient.connect(g.url!, short.secret);
    expect(stream.status).toBe(200);
    const init = await fetch(`${g.url!}/mcp`, {
      method: 'POST',
      headers: {
        ...MCP_HEADERS,
        'content-type': 'application/json',
        authorization: `Bearer ${short.secret}`,
      },
      body: JSON.stringify(INITIALIZE),
    });
    expect(init.status).toBe(200);
    await init.text();
    const sessions = await mcpSessions(g);
    expect(sessions).toBeGreaterThanOrEqual(1);

    expect(await stream.endedWithin(15_000), 'the stream ends when its token expires').toBe(true);
    expect(await mcpSessions(g)).toBe(sessions - 1);
    const after = await http<ErrorAnswer>(g, 'GET', '/v1/invocations', short.secret);
    expect(after.status).toBe(401);
    expect(after.body.error.code).toBe('UNAUTHENTICATED');
    expect(after.body.error.message).toBe(
      `The bearer token expired at ${short.token.expiresAt}; ask an admin for a new one (gatehouse tokens create).`,
    );
    const mcp = await http<{ error: { message: string } }>(
      g,
      'POST',
      '/mcp',
      short.secret,
      INITIALIZE,
      MCP_HEADERS,
    );
    expect(mcp.status).toBe(401);
    expect(mcp.body.error.message).toContain('expired at');
  });

  it('revocation: 401 at once, the open event stream and MCP session of the token are closed, other tokens of the principal keep working', async () => {
    const one = await agentToken({ label: 'to-revoke' });
    const other = await agentToken({ label: 'kept' });
    const stream = await SseClient.connect(g.url!, one.secret);
    const kept = await SseClient.connect(g.url!, other.secret);
    const init = await fetch(`${g.url!}/mcp`, {
      method: 'POST',
      headers: {
        ...MCP_HEADERS,
        'content-type': 'application/json',
        authorization: `Bearer ${one.secret}`,
      },
      body: JSON.stringify(INITIALIZE),
    });
    const session = init.headers.get('mcp-session-id')!;
    await init.text();
    const sessions = await mcpSessions(g);

    const revoked = await http<TokenInfo>(
      g,
      'POST',
      `/v1/tokens/${one.token.id}/revoke`,
      g.tokens.admin,
      { reason: 'left on a shared laptop' },
    );
    expect(revoked.status).toBe(200);
    expect(revoked.body).toMatchObject({
      status: 'revoked',
      revokeReason: 'left on a shared laptop',
    });
    expect(await stream.endedWithin(10_000)).toBe(true);
    expect(await mcpSessions(g)).toBe(sessions - 1);
    const refused = await http<ErrorAnswer>(g, 'GET', '/v1/tools', one.secret);
    expect(refused.status).toBe(401);
    expect(refused.body.error.message).toBe(
      `The bearer token was revoked at ${revoked.body.revokedAt}; ask an admin for a new one.`,
    );
    // The session is gone for the principal's other token too.
    const reuse = await http(
      g,
      'POST',
      '/mcp',
      other.secret,
      { jsonrpc: '2.0', id: 2, method: 'tools/list' },
      {
        ...MCP_HEADERS,
        'mcp-session-id': session,
      },
    );
    expect(reuse.status).toBe(404);

    // The other token and its stream are untouched; revoking again changes nothing.
    expect((await http(g, 'GET', '/v1/tools', other.secret)).status).toBe(200);
    expect(await kept.endedWithin(200)).toBe(false);
    kept.close();
    const again = await http<TokenInfo>(
      g,
      'POST',
      `/v1/tokens/${one.token.id}/revoke`,
      g.tokens.admin,
    );
    expect(again.status).toBe(200);
    expect(again.body.revokedAt).toBe(revoked.body.revokedAt);
  });

  it('a Studio session ends with the token it was signed in with: never later than its expiry, at once on its revocation', async () => {
    const reviewerId = g.gateway.directory.authenticate(g.tokens.reviewer)!.id;
    const made = await http<NewToken>(g, 'POST', '/v1/tokens', g.tokens.admin, {
      principal: reviewerId,
      ttl: '1h',
      label: 'studio',
    });
    expect(made.status, JSON.stringify(made.body)).toBe(201);
    const signIn = await fetch(`${g.url!}/v1/sessions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${made.body.secret}` },
    });
    expect(signIn.status).toBe(201);
    // The session (8 h by default) ends with the token, an hour from now: so does the cookie.
    const opened = (await signIn.json()) as { expiresAt: string };
    expect(opened.expiresAt).toBe(made.body.token.expiresAt);
    const setCookie = signIn.headers.get('set-cookie')!;
    const maxAge = Number(/Max-Age=(\d+)/i.exec(setCookie)?.[1]);
    expect(maxAge).toBeGreaterThan(3500);
    expect(maxAge).toBeLessThanOrEqual(3600);
    const cookie = setCookie.split(';')[0]!;
    const current = () =>
      fetch(`${g.url!}/v1/sessions/current`, { headers: { cookie } }).then((r) => r.status);
    expect(await current()).toBe(200);
    expect((await http(g, 'GET', '/v1/invocations', undefined, undefined, { cookie })).status).toBe(
      200,
    );

    const revoked = await http(
      g,
      'POST',
      `/v1/tokens/${made.body.token.id}/revoke`,
      g.tokens.admin,
    );
    expect(revoked.status).toBe(200);
    expect(await current()).toBe(401);
    expect((await http(g, 'GET', '/v1/invocations', undefined, undefined, { cookie })).status).toBe(
      401,
    );
    // The reviewer's other token and a session of it are untouched.
    expect((await http(g, 'GET', '/v1/invocations', g.tokens.reviewer)).status).toBe(200);
  });

  it('rotation: a new id and secret; the old one stops at once, or after the overlap asked for', async () => {
    const first = await agentToken({ label: 'rotating', ttl: '2d' });
    const rotated = await http<NewToken>(
      g,
      'POST',
      `/v1/tokens/${first.token.id}/rotate`,
      g.tokens.admin,
      {
        ttl: '30d',
      },
    );
    expect(rotated.status).toBe(201);
    expect(rotated.body.token.id).not.toBe(first.token.id);
    expect(rotated.body.secret).not.toBe(first.secret);
    expect(rotated.body.token.label).toBe('rotating');
    expect(
      Date.parse(rotated.body.token.expiresAt) - Date.parse(rotated.body.token.createdAt),
    ).toBe(30 * 86_400_000);
    const old = await http<ErrorAnswer>(g, 'GET', '/v1/tools', first.secret);
    expect(old.status).toBe(401);
    expect(old.body.error.message).toContain('replaced by rotation');
    expect((await http(g, 'GET', '/v1/tools', rotated.body.secret)).status).toBe(200);
    const twice = await http<ErrorAnswer>(
      g,
      'POST',
      `/v1/tokens/${first.token.id}/rotate`,
      g.tokens.admin,
    );
    expect(twice.status).toBe(409);

    // With an overlap both work until it ends; the old one's stream ends with it.
    const overlapped = await http<NewToken>(
      g,
      'POST',
      `/v1/tokens/${rotated.body.token.id}/rotate`,
      g.tokens.admin,
      { overlapSeconds: 2 },
    );
    expect(overlapped.status).toBe(201);
    expect((await http(g, 'GET', '/v1/tools', rotated.body.secret)).status).toBe(200);
    const stream = await SseClient.connect(g.url!, rotated.body.secret);
    expect(stream.status).toBe(200);
    expect(await stream.endedWithin(15_000)).toBe(true);
    expect((await http(g, 'GET', '/v1/tools', rotated.body.secret)).status).toBe(401);
    expect((await http(g, 'GET', '/v1/tools', overlapped.body.secret)).status).toBe(200);
    for (const overlapSeconds of [-1, 3601, 1.5, '60']) {
      const bad = await http<ErrorAnswer>(
        g,
        'POST',
        `/v1/tokens/${overlapped.body.token.id}/rotate`,
        g.tokens.admin,
        { overlapSeconds },
      );
      expect(bad.status, String(overlapSeconds)).toBe(400);
      expect(bad.body.error.details.pointer).toBe('/overlapSeconds');
    }
  });

  it('a principal lists, revokes and rotates its own tokens only; rotating its own keeps the expiry', async () => {
    const mine = await agentToken({ label: 'self-service' });
    const list = await http<{ tokens: TokenInfo[] }>(g, 'GET', '/v1/tokens', mine.secret);
    expect(list.status).toBe(200);
    expect(list.body.tokens.length).toBeGreaterThan(1);
    expect(new Set(list.body.tokens.map((t) => t.principal.id))).toEqual(new Set([agentId]));
    // The admin sees the tenant's, every principal's.
    const all = await http<{ tokens: TokenInfo[] }>(
      g,
      'GET',
      '/v1/tokens?limit=500',
      g.tokens.admin,
    );
    expect(new Set(all.body.tokens.map((t) => t.principal.name))).toEqual(
      new Set(['demo-agent', 'demo-reviewer', 'demo-operator', 'demo-maintainer', 'demo-admin']),
    );
    const reviewers = all.body.tokens.filter((t) => t.principal.name === 'demo-reviewer');
    // Another principal's token is answered as one that does not exist.
    for (const action of ['revoke', 'rotate']) {
      const foreign = await http<ErrorAnswer>(
        g,
        'POST',
        `/v1/tokens/${reviewers[0]!.id}/${action}`,
        mine.secret,
      );
      const missing = await http<ErrorAnswer>(
        g,
        'POST',
        `/v1/tokens/no-such-token/${action}`,
        mine.secret,
      );
      expect(foreign.status).toBe(404);
      expect(foreign.body.error.message.replace(reviewers[0]!.id, 'X')).toBe(
        missing.body.error.message.replace('no-such-token', 'X'),
      );
    }
    const longer = await http<ErrorAnswer>(
      g,
      'POST',
      `/v1/tokens/${mine.token.id}/rotate`,
      mine.secret,
      {
        ttl: '300d',
      },
    );
    expect(longer.status).toBe(403);
    const own = await http<NewToken>(g, 'POST', `/v1/tokens/${mine.token.id}/rotate`, mine.secret);
    expect(own.status).toBe(201);
    expect(own.body.token.expiresAt).toBe(mine.token.expiresAt);
    const self = await http<TokenInfo>(
      g,
      'POST',
      `/v1/tokens/${own.body.token.id}/revoke`,
      own.body.secret,
    );
    expect(self.status).toBe(200);
    expect((await http(g, 'GET', '/v1/tools', own.body.secret)).status).toBe(401);
    // Only admins make tokens.
    expect(
      (await http(g, 'POST', '/v1/tokens', g.tokens.agent, { principal: agentId })).status,
    ).toBe(403);
  });

  it('no answer ever carries a secret or its hash; the audit log records what was done, not the secret', async () => {
    const made = await agentToken({ label: 'audited' });
    const rotated = await http<NewToken>(
      g,
      'POST',
      `/v1/tokens/${made.token.id}/rotate`,
      g.tokens.admin,
    );
    await http(g, 'POST', `/v1/tokens/${rotated.body.token.id}/revoke`, g.tokens.admin);
    const secrets = [made.secret, rotated.body.secret, ...Object.values(g.tokens)];
    const answers = [
      JSON.stringify((await http(g, 'GET', '/v1/tokens?limit=500', g.tokens.admin)).body),
      JSON.stringify((await http(g, 'GET', '/v1/principals', g.tokens.admin)).body),
    ];
    const records = await storedRows<{ record: string }>(
      g,
      "select record from audit_records where record like '%token%'",
    );
    const types = records.map((r) => (JSON.parse(r.record) as { type: string }).type);
    expect(types).toEqual(
      expect.arrayContaining(['token.created', 'token.rotated', 'token.revoked']),
    );
    for (const text of [...answers, ...records.map((r) => r.record)])
      for (const secret of secrets) {
        expect(text).not.toContain(secret);
        expect(text).not.toContain(sha256(secret));
      }
    // Stored hashed: the tokens table holds each secret's SHA-256, never the secret.
    const stored = await storedRows<{ hash: string }>(g, 'select hash from tokens');
    expect(stored.map((r) => r.hash)).toContain(sha256(made.secret));
    expect(JSON.stringify(stored)).not.toContain(made.secret);
  });

  it('a principal is created with its first token and an expiry; the agent role is not combined with another', async () => {
    const made = await http<{ principal: { id: string }; token: string; tokenInfo: TokenInfo }>(
      g,
      'POST',
      '/v1/principals',
      g.tokens.admin,
      { name: 'ttl-reviewer', roles: ['reviewer'], ttl: '1h', label: 'laptop' },
    );
    expect(made.status, JSON.stringify(made.body)).toBe(201);
    expect(made.body.tokenInfo).toMatchObject({ label: 'laptop', status: 'active' });
    expect(
      Date.parse(made.body.tokenInfo.expiresAt) - Date.parse(made.body.tokenInfo.createdAt),
    ).toBe(3600_000);
    expect((await http(g, 'GET', '/v1/approvals', made.body.token)).status).toBe(200);
    const listed = await http<{ principals: { id: string; name: string }[] }>(
      g,
      'GET',
      '/v1/principals',
      g.tokens.admin,
    );
    expect(listed.body.principals.map((p) => p.name)).toContain('ttl-reviewer');
  });
});

describe('last use of a token', () => {
  it('is kept to the minute: shown at once in the list, written at most once a minute per token', async () => {
    const clock = new ManualClock(Date.now());
    const g = await startDemoGateway({ clock });
    try {
      const id = () => g.gateway.directory.authenticate(g.tokens.operator)!;
      const row = async () =>
        (
          await storedRows<{ at: string | null }>(
            g,
            "select t.last_used_at as at from tokens t join principals p on p.id = t.principal where p.name = 'demo-operator'",
          )
        )[0]!.at;
      const settle = () => new Promise((r) => setTimeout(r, 50));
      const listed = async () =>
        (await g.inject<{ tokens: TokenInfo[] }>('GET', '/v1/tokens', { token: g.tokens.operator }))
          .body.tokens[0]!.lastUsedAt;

      expect(await row()).toBeNull();
      const t0 = new Date(clock.now()).toISOString();
      expect(await listed()).toBe(t0);
      await settle();
      expect(await row()).toBe(t0);

      clock.advance(30_000);
      id();
      const t1 = new Date(clock.now()).toISOString();
      expect(await listed()).toBe(t1);
      await settle();
      expect(await row(), 'not written again within the minute').toBe(t0);

      clock.advance(31_000);
      await listed();
      await settle();
      expect(await row()).toBe(new Date(clock.now()).toISOString());
    } finally {
      await g.close();
    }
  });

  it('a token expires on the gateway clock, answering 401 naming when', async () => {
    const clock = new ManualClock(Date.now());
    const g = await startDemoGateway({ clock });
    try {
      const agentId = g.gateway.directory.authenticate(g.tokens.agent)!.id;
      const made = await g.inject<NewToken>('POST', '/v1/tokens', {
        token: g.tokens.admin,
        body: { principal: agentId, ttl: '1h' },
      });
      const ok = await g.invoke(
        made.body.secret,
        'before-expiry',
        call('demo/echo', { message: 'x' }),
      );
      expect(ok.status).toBe(200);
      clock.advance(3600_000);
      const late = await g.invoke(
        made.body.secret,
        'after-expiry',
        call('demo/echo', { message: 'x' }),
      );
      expect(late.status).toBe(401);
      expect((late.body as unknown as ErrorAnswer).error.message).toContain(
        `expired at ${made.body.token.expiresAt}`,
      );
    } finally {
      await g.close();
    }
  });
});
