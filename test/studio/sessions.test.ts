import { afterEach, describe, expect, it } from 'vitest';
import type { Approval } from '../../src/approvals/index.js';
import { ManualClock } from '../../src/core/index.js';
import { call, startDemoGateway } from '../helpers/gateway-fixture.js';
import type { DemoGateway, ErrorBody } from '../helpers/gateway-fixture.js';

let g: DemoGateway | undefined;
afterEach(async () => {
  await g?.close();
  g = undefined;
});

interface SessionAnswer {
  principal: { name: string; roles: string[]; tenant: string };
  expiresAt: string;
  csrfToken: string;
}

/** Signs in with `token`; returns the cookie header to send back and the CSRF token. */
async function signIn(d: DemoGateway, token: string) {
  const res = await d.inject<SessionAnswer>('POST', '/v1/sessions', { token });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  const setCookie = String(res.headers['set-cookie']);
  const cookie = setCookie.split(';')[0]!;
  return { cookie, csrf: res.body.csrfToken, setCookie, body: res.body };
}

async function pendingApproval(d: DemoGateway, key: string): Promise<string> {
  const res = await d.invoke(
    d.tokens.agent,
    key,
    call('demo/propose-change', { title: key, diff: '+x\n' }),
  );
  expect(res.body.status).toBe('awaiting_approval');
  return res.body.approvalId!;
}

describe('Studio sessions', () => {
  it('exchanges a person’s token for an HttpOnly, SameSite=Strict cookie with an expiry', async () => {
    const clock = new ManualClock(Date.now());
    g = await startDemoGateway({ clock });
    const { setCookie, body } = await signIn(g, g.tokens.reviewer);
    expect(setCookie).toMatch(/^gatehouse_session=[A-Za-z0-9_-]{43};/);
    expect(setCookie).toMatch(/; HttpOnly/);
    expect(setCookie).toMatch(/; SameSite=Strict/);
    expect(setCookie).toMatch(/; Path=\//);
    expect(setCookie).toMatch(/; Max-Age=28800/);
    expect(setCookie).not.toMatch(/Secure/); // not TLS here
    expect(body.principal).toMatchObject({ tenant: 'acme', roles: ['reviewer'] });
    expect(body.expiresAt).toBe(new Date(clock.now() + 8 * 3600 * 1000).toISOString());
    expect(body.csrfToken).toMatch(/^[A-Za-z0-9_-]{43}$/);
  });

  it('refuses agents and unknown tokens', async () => {
    g = await startDemoGateway();
    const agent = await g.inject<ErrorBody>('POST', '/v1/sessions', { token: g.tokens.agent });
    expect(agent.status).toBe(403);
    expect(agent.body.error.message).toMatch(/Agents cannot sign in/);
    expect(agent.headers['set-cookie']).toBeUndefined();
    const wrong = await g.inject<ErrorBody>('POST', '/v1/sessions', { token: 'nope' });
    expect(wrong.status).toBe(401);
    const none = await g.inject<ErrorBody>('POST', '/v1/sessions');
    expect(none.status).toBe(401);
  });

  it('reads with the cookie alone; a write needs the session’s CSRF token', async () => {
    g = await startDemoGateway();
    const id = await pendingApproval(g, 'csrf-1');
    const { cookie, csrf } = await signIn(g, g.tokens.reviewer);
    const list = await g.inject<{ approvals: Approval[] }>('GET', '/v1/approvals', {
      headers: { cookie },
    });
    expect(list.status).toBe(200);
    expect(list.body.approvals.map((a) => a.id)).toEqual([id]);

    const bare = await g.inject<ErrorBody>('POST', `/v1/approvals/${id}/approve`, {
      headers: { cookie },
      body: { reason: 'ok' },
    });
    expect(bare.status).toBe(403);
    expect(bare.body.error.message).toMatch(/X-CSRF-Token/);
    const wrong = await g.inject('POST', `/v1/approvals/${id}/approve`, {
      headers: {
        cookie,
        'x-csrf-token':
          `${csrf.slice(0, -1)}A` === csrf ? `${csrf.slice(0, -1)}B` : `${csrf.slice(0, -1)}A`,
      },
      body: { reason: 'ok' },
    });
    expect(wrong.status).toBe(403);
    const me = await g.inject<SessionAnswer>('GET', '/v1/sessions/current', {
      headers: { cookie },
    });
    expect(me.body.csrfToken).toBe(csrf);
    const ok = await g.inject<Approval>('POST', `/v1/approvals/${id}/approve`, {
      headers: { cookie, 'x-csrf-token': csrf },
      body: { reason: 'ok' },
    });
    expect(ok.status).toBe(200);
    expect(ok.body.status).toBe('approved');
  });

  it('a session keeps the roles and tenant of its token', async () => {
    g = await startDemoGateway();
    const { cookie, csrf } = await signIn(g, g.tokens.maintainer);
    const id = await pendingApproval(g, 'roles-1');
    const list = await g.inject<ErrorBody>('GET', '/v1/approvals', { headers: { cookie } });
    expect(list.status).toBe(403);
    const other = await g.inject<ErrorBody>('POST', `/v1/approvals/${id}/approve`, {
      headers: { cookie, 'x-csrf-token': csrf },
      body: {},
    });
    expect(other.status).toBe(403);
  });

  it('signing out revokes the session; an expired session is refused', async () => {
    const clock = new ManualClock(Date.now());
    g = await startDemoGateway({ clock });
    const first = await signIn(g, g.tokens.operator);
    const noCsrf = await g.inject('DELETE', '/v1/sessions/current', {
      headers: { cookie: first.cookie },
    });
    expect(noCsrf.status).toBe(403);
    const out = await g.inject('DELETE', '/v1/sessions/current', {
      headers: { cookie: first.cookie, 'x-csrf-token': first.csrf },
    });
    expect(out.status).toBe(204);
    expect(String(out.headers['set-cookie'])).toMatch(/^gatehouse_session=;/);
    const after = await g.inject<ErrorBody>('GET', '/v1/uncertain', {
      headers: { cookie: first.cookie },
    });
    expect(after.status).toBe(401);
    expect(after.body.error.message).toMatch(/sign in again/);

    const second = await signIn(g, g.tokens.operator);
    expect(
      (await g.inject('GET', '/v1/uncertain', { headers: { cookie: second.cookie } })).status,
    ).toBe(200);
    clock.advance(8 * 3600 * 1000);
    expect(
      (await g.inject('GET', '/v1/uncertain', { headers: { cookie: second.cookie } })).status,
    ).toBe(401);
    expect(
      (await g.inject('GET', '/v1/sessions/current', { headers: { cookie: second.cookie } }))
        .status,
    ).toBe(401);
  });

  it('a decision names the request hash the reviewer saw, and another hash is refused', async () => {
    g = await startDemoGateway();
    const id = await pendingApproval(g, 'hash-1');
    const wrong = await g.inject<ErrorBody>('POST', `/v1/approvals/${id}/approve`, {
      token: g.tokens.reviewer,
      body: { reason: 'ok', requestHash: '0'.repeat(64) },
    });
    expect(wrong.status).toBe(409);
    expect(wrong.body.error.details).toMatchObject({ pointer: '/requestHash' });
    const a = (await g.inject<Approval>('GET', `/v1/approvals/${id}`, { token: g.tokens.reviewer }))
      .body;
    expect(a.status).toBe('pending');
    const right = await g.inject<Approval>('POST', `/v1/approvals/${id}/approve`, {
      token: g.tokens.reviewer,
      body: { reason: 'ok', requestHash: a.requestHash },
    });
    expect(right.status).toBe(200);
  });
});
