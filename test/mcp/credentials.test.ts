import { randomBytes, randomUUID } from 'node:crypto';
import { createServer } from 'node:http';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { McpServer, WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isGatehouseError } from '../../src/core/index.js';
import { startDemoGateway } from '../helpers/gateway-fixture.js';
import type { DemoGateway } from '../helpers/gateway-fixture.js';
import { logSize, recordsSince } from '../helpers/audit-records.js';
import { publishAgent } from '../helpers/sandbox-tools.js';
import { buildFixture } from '../fixtures/build-fixture.js';
import { ACTOR, TENANT } from './mcp-harness.js';
import { send, toRequest } from '../helpers/web-request.js';

/** A secret with characters that encoders change, so every redaction form differs. */
const SECRET = `mcp/${randomBytes(12).toString('hex')}:q+z`;

let g: DemoGateway;
/** Fixture configs, readable by the sandbox user (stdio servers may run in a sandbox). */
const configs = mkdtempSync(join(tmpdir(), 'gatehouse-mcp-cred-'));
chmodSync(configs, 0o755);

beforeAll(async () => {
  g = await startDemoGateway();
  const put = await g.inject('PUT', '/v1/secrets/upstream-token', {
    token: g.tokens.admin,
    body: { value: SECRET, scopes: ['mcp'] },
  });
  expect(put.status).toBe(200);
});
afterAll(async () => {
  await g?.close();
  rmSync(configs, { recursive: true, force: true });
});

function envUpstream(name: string, extra: Record<string, unknown> = {}) {
  const file = join(configs, `${name}.json`);
  writeFileSync(
    file,
    JSON.stringify({
      tools: [
        {
          name: 'show-env',
          description: 'shows an environment variable',
          inputSchema: { type: 'object', properties: { name: { type: 'string' } } },
          behaviour: 'env',
        },
      ],
      ...extra,
    }),
    { mode: 0o644 },
  );
  return { command: process.execPath, args: [buildFixture('changing-upstream'), file] };
}

describe('credentials of upstream MCP servers come from the broker', () => {
  it('injects a stdio server variable and redacts its value from the governed call', async () => {
    const server = await g.gateway.mcp.register(TENANT, ACTOR, {
      name: 'env-upstream',
      transport: {
        type: 'stdio',
        ...envUpstream('env-upstream'),
        credentials: [{ ref: 'upstream-token', scope: 'mcp', inject: { env: 'UPSTREAM_TOKEN' } }],
      },
    });
    expect(JSON.stringify(server)).not.toContain(SECRET);
    await g.gateway.mcp.verify(TENANT, server.id, ACTOR);
    const { descriptor } = await g.gateway.mcp.bind(TENANT, server.id, ACTOR, {
      tool: 'show-env',
      class: 'read',
      descriptor: { id: 'test/show-env', version: '1.0.0' },
    });
    await g.gateway.mcp.activate(TENANT, server.id, ACTOR);
    const agent = await publishAgent(g, 'mcp-credentials-agent', [
      descriptor as unknown as Record<string, unknown>,
    ]);
    const r = await g.invoke(agent, 'mcp-cred-1', {
      tool: { id: 'test/show-env', version: '1.0.0' },
      input: { name: 'UPSTREAM_TOKEN' },
      environment: 'dev',
    });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    expect(r.body.status).toBe('observed');
    const out = JSON.stringify(r.body.output);
    // The upstream saw the value (it answered with it) and the sanitizer removed it.
    expect(out).toContain('the variable holds [REDACTED:brokered:upstream-token]');
    expect(JSON.stringify(r.body)).not.toContain(SECRET);
    expect(r.body.redactions).toEqual(
      expect.arrayContaining([expect.objectContaining({ kind: 'brokered:upstream-token' })]),
    );
    const stored = await g.gateway.mcp.get(TENANT, server.id);
    expect(JSON.stringify(stored)).not.toContain(SECRET);
    await g.gateway.mcp.retire(TENANT, server.id, ACTOR);
  });

  it('redacts the brokered value from an upstream error that quotes it on a resource read', async () => {
    const server = await g.gateway.mcp.register(TENANT, ACTOR, {
      name: 'echoing-upstream',
      transport: {
        type: 'stdio',
        ...envUpstream('echoing-upstream', {
          resources: [
            { uri: 'k://echo', name: 'echo', raw: 'null', error: 'the key $UPSTREAM_TOKEN is bad' },
          ],
        }),
        credentials: [{ ref: 'upstream-token', scope: 'mcp', inject: { env: 'UPSTREAM_TOKEN' } }],
      },
    });
    await g.gateway.mcp.verify(TENANT, server.id, ACTOR);
    await g.gateway.mcp.activate(TENANT, server.id, ACTOR);
    // The path the /mcp endpoint's resources/read takes to the upstream.
    const err = await g.gateway.mcp
      .readUpstream(TENANT, server.id, (c, t) => c.readResource('k://echo', t))
      .then(
        () => undefined,
        (e: unknown) => e as Error,
      );
    expect(isGatehouseError(err)).toBe(true);
    expect(err?.message).toContain('the key [REDACTED:brokered:upstream-token] is bad');
    expect(err?.message).not.toContain(SECRET);
    await g.gateway.mcp.retire(TENANT, server.id, ACTOR);
  });

  it('redacts the brokered value from the stderr line of an upstream that prints it and fails to start', async () => {
    const server = await g.gateway.mcp.register(TENANT, ACTOR, {
      name: 'leaky-upstream',
      transport: {
        type: 'stdio',
        ...envUpstream('leaky-upstream', {
          refuseStart: true,
          stderr: 'Error: the key $UPSTREAM_TOKEN was rejected',
        }),
        credentials: [{ ref: 'upstream-token', scope: 'mcp', inject: { env: 'UPSTREAM_TOKEN' } }],
      },
    });
    const from = await logSize(g);
    const err = await g.gateway.mcp.verify(TENANT, server.id, ACTOR).then(
      () => undefined,
      (e: unknown) => e as Error,
    );
    // The upstream printed the value it was given; the gateway says what it printed, redacted.
    expect(err?.message).toMatch(
      /\(stderr: Error: the key \[REDACTED:brokered:upstream-token\] was rejected\)/,
    );
    expect(err?.message).not.toContain(SECRET);
    expect(JSON.stringify(await g.gateway.mcp.get(TENANT, server.id))).not.toContain(SECRET);
    // The real broker issued the value (recorded), and no record holds it.
    const records = await recordsSince(g, from);
    expect(records.map((r) => r.record.type)).toContain('credential.issued');
    expect(JSON.stringify(records)).not.toContain(SECRET);
    await g.gateway.mcp.retire(TENANT, server.id, ACTOR);
  });

  it('fails verification with the broker code for a missing secret or a scope not granted; the server stays registered', async () => {
    for (const [ref, scope, code] of [
      ['no-such-secret', 'mcp', 'CREDENTIAL_UNAVAILABLE'],
      ['upstream-token', 'admin', 'CREDENTIAL_SCOPE_DENIED'],
    ] as const) {
      const server = await g.gateway.mcp.register(TENANT, ACTOR, {
        name: `bad-${ref}`,
        transport: {
          type: 'stdio',
          ...envUpstream(`bad-${ref}`),
          credentials: [{ ref, scope, inject: { env: 'UPSTREAM_TOKEN' } }],
        },
      });
      const err = await g.gateway.mcp.verify(TENANT, server.id, ACTOR).catch((e: unknown) => e);
      expect(isGatehouseError(err) && err.code).toBe(code);
      expect((await g.gateway.mcp.get(TENANT, server.id)).server.state).toBe('registered');
      await g.gateway.mcp.retire(TENANT, server.id, ACTOR);
    }
  });

  it('refuses file injection and headers for a stdio server, and variables for an HTTP one', async () => {
    const bad = [
      { type: 'stdio', ...envUpstream('x'), inject: { file: '/run/secrets/t' } },
      { type: 'stdio', ...envUpstream('y'), inject: { header: 'authorization' } },
      { type: 'http', url: 'http://127.0.0.1:1/mcp', inject: { env: 'TOKEN' } },
    ];
    for (const { inject, ...t } of bad) {
      const res = await g.inject<{ error: { code: string; message: string } }>(
        'POST',
        '/v1/mcp-servers',
        {
          token: g.tokens.admin,
          body: {
            name: 'refused',
            transport: { ...t, credentials: [{ ref: 'upstream-token', scope: 'mcp', inject }] },
          },
        },
      );
      expect(res.status, JSON.stringify(res.body)).toBe(400);
      expect(res.body.error.message).toMatch(/\/transport\/credentials\/0\/inject/);
    }
  });

  describe('over Streamable HTTP', () => {
    let http: Server;
    let url: string;
    const seen: (string | undefined)[] = [];

    beforeAll(async () => {
      const mcp = new McpServer({ name: 'header-recorder', version: '1.0.0' });
      mcp.registerTool('hello', { description: 'says hello' }, () => ({
        content: [{ type: 'text', text: 'hello' }],
      }));
      const transport = new WebStandardStreamableHTTPServerTransport({
        sessionIdGenerator: () => randomUUID(),
        enableJsonResponse: true,
      });
      await mcp.connect(transport);
      http = createServer((req, res) => {
        seen.push(req.headers.authorization);
        void (async () => {
          await send(res, await transport.handleRequest(await toRequest(req)));
        })();
      });
      await new Promise<void>((ok) => http.listen(0, '127.0.0.1', ok));
      const port = (http.address() as AddressInfo).port;
      url = `http://127.0.0.1:${port}/mcp`;
      // An HTTP upstream must be in the egress allow-list, which the gateway reads at each check.
      const sandbox = g.gateway.config.sandbox;
      sandbox.egressAllow = [...sandbox.egressAllow, `127.0.0.1:${port}`];
    });
    afterAll(async () => {
      http?.closeAllConnections();
      await new Promise<void>((ok) => (http ? http.close(() => ok()) : ok()));
    });

    it('sends the brokered header on every request of the connection', async () => {
      const server = await g.gateway.mcp.register(TENANT, ACTOR, {
        name: 'header-upstream',
        transport: {
          type: 'http',
          url,
          credentials: [
            {
              ref: 'upstream-token',
              scope: 'mcp',
              inject: { header: 'Authorization', format: 'Bearer {value}' },
            },
          ],
        },
      });
      const view = await g.gateway.mcp.verify(TENANT, server.id, ACTOR);
      expect(view.discovery?.tools.map((t) => t.tool.name)).toEqual(['hello']);
      expect(seen.length).toBeGreaterThan(1);
      expect(seen.every((h) => h === `Bearer ${SECRET}`)).toBe(true);
      expect(JSON.stringify(view)).not.toContain(SECRET);
      await g.gateway.mcp.retire(TENANT, server.id, ACTOR);
    });
  });
});
