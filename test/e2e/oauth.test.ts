import {
  Client,
  ClientCredentialsProvider,
  StreamableHTTPClientTransport,
} from '@modelcontextprotocol/client';
import { SignJWT, generateKeyPair } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startAuthorizationServer } from '../helpers/authorization-server.js';
import type { AuthorizationServer, TestClient } from '../helpers/authorization-server.js';
import { startDemoGateway } from '../helpers/gateway-fixture.js';
import type { DemoGateway } from '../helpers/gateway-fixture.js';
import { text } from '../helpers/mcp-client.js';
import { freePort } from '../helpers/ports.js';

const agentClient: TestClient = {
  id: 'ci-agent',
  secret: 'ci-agent-secret-0123456789',
  claims: {
    gatehouse_tenant: 'acme',
    gatehouse_roles: ['agent'],
    gatehouse_project: 'web',
    gatehouse_agent: 'demo-agent@1.0.0',
  },
};
const reviewerClient: TestClient = {
  id: 'ci-reviewer',
  secret: 'ci-reviewer-secret-0123456789',
  claims: { gatehouse_tenant: 'acme', gatehouse_roles: 'reviewer' },
};
const strangerClient: TestClient = {
  id: 'ci-stranger',
  secret: 'ci-stranger-secret-0123456789',
  claims: { gatehouse_tenant: 'globex', gatehouse_roles: ['agent'] },
};

let as: AuthorizationServer;
let g: DemoGateway;
let resource: string;

beforeAll(async () => {
  as = await startAuthorizationServer([agentClient, reviewerClient, strangerClient]);
  const port = await freePort();
  resource = `http://127.0.0.1:${port}`;
  g = await startDemoGateway({
    listen: true,
    config: {
      port,
      oauth: {
        issuer: as.issuer,
        audience: resource,
        jwksUri: null,
        algorithms: ['RS256', 'ES256'],
        claims: {
          tenant: 'gatehouse_tenant',
          roles: 'gatehouse_roles',
          project: 'gatehouse_project',
          agent: 'gatehouse_agent',
        },
        clockToleranceSeconds: 5,
      },
    },
  });
});
afterAll(async () => {
  await g?.close();
  await as?.close();
});

const echo = {
  tool: { id: 'demo/echo', version: '1.0.0' },
  input: { message: 'hello oauth' },
  environment: 'dev',
};

function invoke(token: string, key: string) {
  return fetch(`${resource}/v1/invocations`, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${token}`,
      'content-type': 'application/json',
      'idempotency-key': key,
    },
    body: JSON.stringify(echo),
  });
}

/** A token like the server's, signed with its key, with `change` applied to the claims. */
async function forged(
  change: (claims: Record<string, unknown>) => Record<string, unknown>,
  key = as.privateKey,
  alg = 'RS256',
): Promise<string> {
  const now = Math.floor(Date.now() / 1000);
  const claims = change({
    ...agentClient.claims,
    iss: as.issuer,
    aud: resource,
    sub: agentClient.id,
    iat: now,
    exp: now + 300,
  });
  return new SignJWT(claims).setProtectedHeader({ alg, kid: as.kid, typ: 'at+jwt' }).sign(key);
}

async function expectRefused(token: string, why: RegExp): Promise<void> {
  const res = await invoke(token, `refused-${Math.random()}`);
  expect(res.status).toBe(401);
  expect(res.headers.get('www-authenticate')).toBe(
    `Bearer resource_metadata="${resource}/.well-known/oauth-protected-resource"`,
  );
  const body = (await res.json()) as { error: { code: string; message: string } };
  expect(body.error.code).toBe('UNAUTHENTICATED');
  expect(body.error.message).toMatch(why);
}

describe('OAuth 2.1 access tokens from a real authorization server (oidc-provider)', () => {
  it('serves the protected resource metadata and names it in every 401', async () => {
    for (const path of ['', '/mcp']) {
      const res = await fetch(`${resource}/.well-known/oauth-protected-resource${path}`);
      expect(res.status).toBe(200);
      expect(await res.json()).toMatchObject({
        resource,
        authorization_servers: [as.issuer],
      });
    }
    const mcp = await fetch(`${resource}/mcp`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
      },
      body: '{}',
    });
    expect(mcp.status).toBe(401);
    expect(mcp.headers.get('www-authenticate')).toContain('resource_metadata=');
  });

  it('the official SDK client gets a token by itself (client_credentials) and calls a tool over /mcp', async () => {
    const transport = new StreamableHTTPClientTransport(new URL(`${resource}/mcp`), {
      authProvider: new ClientCredentialsProvider({
        clientId: agentClient.id,
        clientSecret: agentClient.secret,
        expectedIssuer: as.issuer,
      }),
    });
    const client = new Client({ name: 'oauth-e2e', version: '1.0.0' });
    try {
      await client.connect(transport);
      const { tools } = await client.listTools();
      expect(tools.map((t) => t.name)).toContain('demo_echo__1_0_0');
      const r = await client.callTool({ name: 'demo_echo__1_0_0', arguments: { message: 'hi' } });
      expect(r.isError, text(r)).toBeFalsy();
      expect(r._meta?.['gatehouse/status']).toBe('observed');
    } finally {
      await client.close();
    }
  });

  it('a token calls a tool over REST as principal oauth:SUB; a reviewer token reviews but cannot invoke', async () => {
    const res = await invoke(await as.token(agentClient, resource), 'oauth-rest-1');
    expect(res.status).toBe(200);
    const record = (await res.json()) as { status: string; principal: string };
    expect(record).toMatchObject({ status: 'observed', principal: 'oauth:ci-agent' });

    const reviewer = await as.token(reviewerClient, resource);
    const list = await fetch(`${resource}/v1/approvals`, {
      headers: { authorization: `Bearer ${reviewer}` },
    });
    expect(list.status).toBe(200);
    expect((await invoke(reviewer, 'oauth-rest-2')).status).toBe(403);
  });

  it('refuses expired, wrong-audience, wrong-issuer, alg none, foreign-key and unknown-tenant tokens with 401', async () => {
    const past = Math.floor(Date.now() / 1000) - 3600;
    await expectRefused(await forged((c) => ({ ...c, iat: past - 300, exp: past })), /expired/);
    await expectRefused(
      await forged((c) => ({ ...c, aud: 'https://other.example.com' })),
      /another audience/,
    );
    await expectRefused(
      await forged((c) => ({ ...c, iss: 'https://evil.example.com' })),
      /another issuer/,
    );
    const none = [
      Buffer.from(JSON.stringify({ alg: 'none', typ: 'JWT' })).toString('base64url'),
      Buffer.from(
        JSON.stringify({
          ...agentClient.claims,
          iss: as.issuer,
          aud: resource,
          sub: 'x',
          exp: 2e9,
        }),
      ).toString('base64url'),
      '',
    ].join('.');
    await expectRefused(none, /algorithm|not a valid JWT/);
    const { privateKey: other } = await generateKeyPair('RS256');
    await expectRefused(await forged((c) => c, other), /signature/);
    await expectRefused(await as.token(strangerClient, resource), /tenant globex/);
  });

  it('the authorization server will not issue a token for another resource that this gateway accepts', async () => {
    const elsewhere = await as.token(agentClient, 'https://other.example.com');
    await expectRefused(elsewhere, /another audience/);
  });
});
