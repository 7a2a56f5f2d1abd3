import { request as httpRequest } from 'node:http';
import { ProtocolError } from '@modelcontextprotocol/client';
import type { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import type { CallToolResult } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sha256Hex } from '../../src/core/index.js';
import type { InvocationRecord } from '../../src/invocation/index.js';
import { startDemoGateway } from '../helpers/gateway-fixture.js';
import { verifiedReceipt } from '../helpers/sandbox-tools.js';
import { connectMcp, nextEvent, postThenDrop, resumeStream, text } from '../helpers/mcp-client.js';
import type { DemoGateway } from '../helpers/gateway-fixture.js';
import { logSize, recordsSince } from '../helpers/audit-records.js';

let g: DemoGateway;
let url: string;
const clients: Client[] = [];

beforeAll(async () => {
  g = await startDemoGateway({ listen: true });
  url = `${g.url!}/mcp`;
});
afterAll(async () => {
  await Promise.allSettled(clients.map((c) => c.close()));
  await g?.close();
});

async function connect(token = g.tokens.agent): Promise<{
  client: Client;
  transport: StreamableHTTPClientTransport;
}> {
  const connected = await connectMcp(url, token);
  clients.push(connected.client);
  return connected;
}

function meta(r: CallToolResult): Record<string, unknown> {
  return r._meta ?? {};
}

/** A raw POST to /mcp with the initialize request, for the refusals the SDK client cannot send. */
function rawPost(
  headers: Record<string, string>,
  body: string = JSON.stringify(initialize),
): Promise<{ status: number; body: string }> {
  const u = new URL(url);
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      {
        host: u.hostname,
        port: u.port,
        path: '/mcp',
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
          host: u.host,
          ...headers,
        },
      },
      (res) => {
        let data = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => (data += c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: data }));
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

const initialize = {
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: {
    protocolVersion: '2025-06-18',
    capabilities: {},
    clientInfo: { name: 'raw', version: '1' },
  },
};

describe('POST /mcp with the official SDK client', () => {
  it('lists the active tools of the agent release closure with their schemas, and not revoked ones', async () => {
    const { client } = await connect();
    const before = await client.listTools();
    const echo = before.tools.find((t) => t.name === 'demo_echo__1_0_0');
    expect(echo?.description).toMatch(/Returns the message/);
    expect(echo?.inputSchema).toMatchObject({ type: 'object', required: ['message'] });
    expect(before.tools.map((t) => t.name)).toContain('demo_propose-change__1_0_0');
    for (const t of before.tools) expect(t.name).toMatch(/^[A-Za-z0-9_-]{1,64}$/);

    const tools = await g.inject<{ tools: { id: string; state: string }[] }>('GET', '/v1/tools', {
      token: g.tokens.agent,
    });
    const callable = tools.body.tools.filter((t) => t.state !== 'revoked');
    expect(before.tools).toHaveLength(callable.length);

    const revoked = await g.inject('POST', '/v1/events', {
      token: g.tokens.admin,
      body: {
        id: 'revoke:demo/sleep',
        type: 'AssetReleaseRevoked',
        data: { assetId: 'demo/sleep', version: '1.0.0', reason: 'test' },
      },
    });
    expect(revoked.status, JSON.stringify(revoked.body)).toBe(200);
    const after = await client.listTools();
    expect(before.tools.map((t) => t.name)).toContain('demo_sleep__1_0_0');
    expect(after.tools.map((t) => t.name)).not.toContain('demo_sleep__1_0_0');
    expect(after.tools).toHaveLength(before.tools.length - 1);
  });

  it('calls demo/echo through the pipeline, with provenance and a receipt that verifies', async () => {
    const { client } = await connect();
    const r = await client.callTool({
      name: 'demo_echo__1_0_0',
      arguments: { message: 'hello over MCP' },
    });
    expect(r.isError).toBeFalsy();
    expect(JSON.parse(text(r))).toEqual({ message: 'hello over MCP' });
    expect(r.structuredContent).toEqual({ message: 'hello over MCP' });
    const m = meta(r);
    expect(m['gatehouse/status']).toBe('observed');
    expect(m['gatehouse/idempotencyKeyDerived']).toBe(true);
    const id = m['gatehouse/invocationId'] as string;
    expect(m['gatehouse/provenance']).toEqual({
      tool: 'demo/echo',
      version: '1.0.0',
      invocation: id,
      untrusted: true,
    });

    const record = await g.inject<InvocationRecord>('GET', `/v1/invocations/${id}`, {
      token: g.tokens.agent,
    });
    expect(record.status).toBe(200);
    expect(record.body.status).toBe('observed');
    expect(record.body.environment).toBe('dev');
    expect(record.body.requestHash).toBe(m['gatehouse/requestHash']);
    await verifiedReceipt(g, id, g.tokens.agent);

    // A later identical call is a new request: it runs again (test/e2e/mcp-endpoint-retries).
    const again = await client.callTool({
      name: 'demo_echo__1_0_0',
      arguments: { message: 'hello over MCP' },
    });
    expect(meta(again)['gatehouse/invocationId']).not.toBe(id);
    expect(meta(again)['gatehouse/idempotencyKey']).not.toBe(m['gatehouse/idempotencyKey']);
    expect(g.executions('demo.echo')).toBe(2);

    // A caller's own key is used as given.
    const own = await client.callTool({
      name: 'demo_echo__1_0_0',
      arguments: { message: 'hello over MCP' },
      _meta: { 'gatehouse/idempotencyKey': 'mcp-own-1' },
    });
    expect(meta(own)['gatehouse/invocationId']).not.toBe(id);
    expect(meta(own)['gatehouse/idempotencyKeyDerived']).toBeUndefined();
  });

  it('answers awaiting_approval as a result, and proceeds with the approval id in _meta', async () => {
    const { client } = await connect();
    const args = { title: 'Fix typo', diff: '-teh\n+the\n' };
    const first = await client.callTool({
      name: 'demo_propose-change__1_0_0',
      arguments: args,
    });
    expect(first.isError).toBeFalsy();
    const m = meta(first);
    expect(m['gatehouse/status']).toBe('awaiting_approval');
    const approvalId = m['gatehouse/approvalId'] as string;
    expect(text(first)).toContain('awaiting_approval');
    expect(text(first)).toContain(m['gatehouse/invocationId'] as string);
    expect(text(first)).toContain(m['gatehouse/requestHash'] as string);
    expect(text(first)).toContain(approvalId);
    expect(g.executions('demo.propose-change')).toBe(0);

    const approved = await g.inject('POST', `/v1/approvals/${approvalId}/approve`, {
      token: g.tokens.reviewer,
      body: {},
    });
    expect(approved.status, JSON.stringify(approved.body)).toBe(200);

    const second = await client.callTool({
      name: 'demo_propose-change__1_0_0',
      arguments: args,
      _meta: { 'gatehouse/approvalId': approvalId },
    });
    expect(second.isError, text(second)).toBeFalsy();
    expect(meta(second)['gatehouse/status']).toBe('observed');
    expect(meta(second)['gatehouse/invocationId']).toBe(m['gatehouse/invocationId']);
    expect(g.executions('demo.propose-change')).toBe(1);
  });

  it('answers arguments that fail the schema with an isError INVALID_INPUT result', async () => {
    const { client } = await connect();
    const r = await client.callTool({
      name: 'demo_echo__1_0_0',
      arguments: { message: 42 },
    });
    expect(r.isError).toBe(true);
    expect(text(r)).toContain('INVALID_INPUT');
    expect(meta(r)['gatehouse/status']).toBe('denied');
    expect(meta(r)['gatehouse/error']).toMatchObject({ code: 'INVALID_INPUT' });
  });

  it('refuses a tool name outside the closure with a protocol error', async () => {
    const { client, transport } = await connect();
    const before = await logSize(g);
    const err = await client.callTool({ name: 'evil_tool__1_0_0', arguments: {} }).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(ProtocolError);
    expect((err as ProtocolError).code).toBe(-32602);
    expect((err as ProtocolError).message).toMatch(/Unknown tool/);
    const refused = (await recordsSince(g, before)).filter(
      (r) => r.record.type === 'mcp.tool.refused',
    );
    expect(refused).toHaveLength(1);
    const agentId = g.gateway.directory.authenticate(g.tokens.agent)!.id;
    expect(refused[0]!.record).toMatchObject({
      actor: agentId,
      subject: `principal/${agentId}`,
      data: { code: 'INVALID_INPUT', reason: 'not-in-closure', name: 'evil_tool__1_0_0' },
    });
    expect(refused[0]!.record.data.sessionSha256).toBe(sha256Hex(transport.sessionId!));

    // A long name with a token in it is recorded bounded and redacted, message included.
    const token = `ghp_${'A1b2C3d4E5'.repeat(3)}abcdef`;
    const since = await logSize(g);
    const longErr = await client
      .callTool({ name: `${token} ${'x'.repeat(100_000)}`, arguments: {} })
      .then(
        () => undefined,
        (e: unknown) => e,
      );
    expect(longErr).toBeInstanceOf(ProtocolError);
    const [long] = (await recordsSince(g, since)).filter(
      (r) => r.record.type === 'mcp.tool.refused',
    );
    const text = JSON.stringify(long!.record);
    expect(text).not.toContain(token);
    expect(text).toContain('[REDACTED:');
    expect(text.length).toBeLessThan(2_000);
  });
});

/** `gatehouse_mcp_refusals_total{code}` as /metrics shows it now. */
async function refusalsCounted(code: string): Promise<number> {
  const m = await g.inject<string>('GET', '/metrics');
  const line = String(m.body)
    .split('\n')
    .find((l) => l.startsWith(`gatehouse_mcp_refusals_total{code="${code}"}`));
  return line === undefined ? 0 : Number(line.split(' ').pop());
}

describe('POST /mcp refuses bad input and attacks', () => {
  it('refuses a forged Host header with 403', async () => {
    const counted = () => refusalsCounted('FORBIDDEN');
    const was = await counted();
    const res = await rawPost({
      authorization: `Bearer ${g.tokens.agent}`,
      host: 'evil.example:80',
    });
    expect(res.status).toBe(403);
    expect(res.body).toMatch(/DNS rebinding/);
    // No tenant is named before the Host is checked: counted, not in a tenant's log.
    expect(await counted()).toBe(was + 1);
  });

  it('refuses a foreign Origin with 403 and accepts its own', async () => {
    const auth = { authorization: `Bearer ${g.tokens.agent}` };
    const foreign = await rawPost({ ...auth, origin: 'http://evil.example' });
    expect(foreign.status).toBe(403);
    const own = await rawPost({ ...auth, origin: g.url! });
    expect(own.status).toBe(200);
  });

  it("answers another principal's session id as an unknown one", async () => {
    const { transport } = await connect();
    const other = await g.gateway.directory.addPrincipal(
      {
        tenant: 'acme',
        name: 'other-agent',
        roles: ['agent'],
        project: 'web',
        agent: { id: 'demo-agent', version: '1.0.0' },
      },
      'test',
    );
    const list = JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/list', params: {} });
    const headers = {
      authorization: `Bearer ${other.token}`,
      'mcp-protocol-version': '2025-06-18',
    };
    const before = await logSize(g);
    const stolen = await rawPost({ ...headers, 'mcp-session-id': transport.sessionId! }, list);
    const unknown = await rawPost({ ...headers, 'mcp-session-id': 'no-such-session' }, list);
    expect(stolen.status).toBe(404);
    expect(stolen).toEqual(unknown);
    // The same answer, but the record tells the attempt on another agent's session apart.
    const refused = (await recordsSince(g, before)).filter(
      (r) => r.record.type === 'mcp.request.refused',
    );
    expect(refused.map((r) => [r.record.actor, r.record.data.reason])).toEqual([
      [other.principal.id, 'foreign-session'],
      [other.principal.id, 'unknown-session'],
    ]);
    expect(JSON.stringify(refused)).not.toContain(transport.sessionId!);
    const own = await rawPost(
      {
        ...headers,
        authorization: `Bearer ${g.tokens.agent}`,
        'mcp-session-id': transport.sessionId!,
      },
      list,
    );
    expect(own.status).toBe(200);
    expect(own.body).toContain('demo_echo__1_0_0');
  });

  it('refuses an oversized body with 413', async () => {
    const big = JSON.stringify({
      ...initialize,
      params: { ...initialize.params, pad: 'x'.repeat(1_100_000) },
    });
    const before = await logSize(g);
    const res = await rawPost({ authorization: `Bearer ${g.tokens.agent}` }, big);
    expect(res.status).toBe(413);
    expect(JSON.parse(res.body)).toMatchObject({ error: { data: { code: 'PAYLOAD_TOO_LARGE' } } });
    const refused = (await recordsSince(g, before)).filter(
      (r) => r.record.type === 'mcp.request.refused',
    );
    expect(refused.map((r) => r.record.data.reason)).toEqual(['body-too-large']);
  });

  it('refuses a body that is not JSON as INVALID_INPUT, saying so, and records it', async () => {
    const before = await logSize(g);
    const res = await rawPost({ authorization: `Bearer ${g.tokens.agent}` }, '{"jsonrpc":');
    expect(JSON.parse(res.body)).toMatchObject({
      error: {
        message: 'The request body is not valid JSON: Unexpected end of JSON input.',
        data: { code: 'INVALID_INPUT' },
      },
    });
    const refused = (await recordsSince(g, before)).filter(
      (r) => r.record.type === 'mcp.request.refused',
    );
    expect(refused.map((r) => r.record.data.reason)).toEqual(['invalid-request']);
  });

  it('refuses a malformed JSON-RPC message naming the message and its member', async () => {
    const auth = { authorization: `Bearer ${g.tokens.agent}` };
    const sessionId = await (async () => {
      const r = await fetch(url, {
        method: 'POST',
        headers: {
          ...auth,
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
        },
        body: JSON.stringify(initialize),
      });
      expect(r.status).toBe(200);
      await r.text();
      return r.headers.get('mcp-session-id')!;
    })();
    const session = { ...auth, 'mcp-session-id': sessionId };
    const cases: [body: unknown, message: string][] = [
      [
        { jsonrpc: '2.0', id: null, method: 'ping' },
        '/id must be a string or an integer; got null',
      ],
      [
        { jsonrpc: '2.0', id: 1.5, method: 'ping' },
        '/id must be a string or an integer; got the fraction 1.5',
      ],
      [{ jsonrpc: '1.0', id: 1, method: 'ping' }, '/jsonrpc must be "2.0"'],
      [{ jsonrpc: '2.0', id: 1, method: {} }, '/method must be a string'],
      [
        { jsonrpc: '2.0', id: 1 },
        'the body has no method (a request or notification) and no result or error',
      ],
      [
        { jsonrpc: '2.0', id: 1, method: 'tools/list', params: [1] },
        '/params must be an object (named parameters); got an array',
      ],
      [{ jsonrpc: '2.0', id: 1, method: 'ping', extra: 1 }, '/extra is not a member of a request'],
      [
        [{ jsonrpc: '2.0', id: 1, method: 'ping' }, 5],
        '/1 must be a JSON-RPC message {"jsonrpc": "2.0", …}; got the number 5',
      ],
      [[], 'the body is an empty batch'],
    ];
    for (const [body, message] of cases) {
      const res = await rawPost(session, JSON.stringify(body));
      expect([body, res.status]).toEqual([body, 400]);
      const error = (JSON.parse(res.body) as { error: { message: string; data: { code: string } } })
        .error;
      expect(error.data.code).toBe('INVALID_INPUT');
      expect(error.message).toContain(`Invalid JSON-RPC message: ${message}`);
    }
    // A malformed initialize says what it lacks, not that a session header is missing.
    const inits: [body: unknown, message: string][] = [
      [{ ...initialize, params: undefined }, '/params must be {"protocolVersion"'],
      [
        { ...initialize, params: { ...initialize.params, protocolVersion: {} } },
        '/params/protocolVersion must be a string',
      ],
      [
        { ...initialize, params: { ...initialize.params, clientInfo: { name: 'x' } } },
        '/params/clientInfo/version must be a string',
      ],
      [{ ...initialize, id: undefined }, '/id is required: initialize is a request'],
      [[initialize, initialize], 'is a batch holding initialize; send initialize alone'],
    ];
    for (const [body, message] of inits) {
      const res = await rawPost(auth, JSON.stringify(body));
      expect([body, res.status]).toEqual([body, 400]);
      const error = (JSON.parse(res.body) as { error: { message: string } }).error;
      expect(error.message).toContain(message);
      expect(error.message).not.toContain('Mcp-Session-Id is required');
    }
    // The session still answers a well-formed message.
    const ping = await rawPost(session, '{"jsonrpc":"2.0","id":7,"method":"ping"}');
    expect([ping.status, ping.body]).toEqual([200, expect.stringContaining('"id":7') as unknown]);
  });

  it('refuses a request without a token with 401, a JWT with 401, and a reviewer with 403', async () => {
    expect((await rawPost({})).status).toBe(401);
    const jwt = 'eyJhbGciOiJIUzI1NiJ9.eyJhdWQiOiJvdGhlciJ9.c2lnbmF0dXJl';
    const foreign = await rawPost({ authorization: `Bearer ${jwt}` });
    expect(foreign.status).toBe(401);
    expect(foreign.body).toMatch(
      /a JWT, and this gateway has no OAuth authorization server configured/,
    );
    const reviewer = await rawPost({ authorization: `Bearer ${g.tokens.reviewer}` });
    expect(reviewer.status).toBe(403);
    expect(reviewer.body).toMatch(/POST \/mcp needs one of the roles agent; you act as reviewer/);
    // The SDK client sees the refusal when it connects.
    await expect(connect(g.tokens.reviewer)).rejects.toThrow(/403|needs one of the roles agent/);
  });
});

describe('resumable streams of /mcp', () => {
  it('primes a POST stream with an id and retry, and replays its answer after the stream dropped', async () => {
    const { transport } = await connect();
    const session = { url, token: g.tokens.agent, sessionId: transport.sessionId! };
    const posted = await postThenDrop(session, {
      jsonrpc: '2.0',
      id: 7,
      method: 'tools/call',
      params: { name: 'demo_echo__1_0_0', arguments: { message: 'resumed' } },
    });
    expect(posted.status).toBe(200);
    const { first: priming, lastEventId } = posted;
    expect(priming).toMatch(/^retry: 1000$/m);
    expect(priming).toMatch(/^data: ?$/m);
    expect(lastEventId).toBeDefined();
    // The client drops the stream before reading the answer, and resumes it.
    posted.drop();
    const resumed = await resumeStream(session, lastEventId!);
    expect(resumed.status).toBe(200);
    const replay = await nextEvent(resumed.body!.getReader());
    expect(replay).toMatch(/^id: \S+$/m);
    expect(/^id: (\S+)$/m.exec(replay)?.[1]).not.toBe(lastEventId);
    const message = JSON.parse(/^data: (.*)$/m.exec(replay)![1]!) as {
      id: number;
      result: CallToolResult;
    };
    expect(message.id).toBe(7);
    expect(JSON.parse(text(message.result))).toEqual({ message: 'resumed' });

    // Another session's event id, or one never given, is unknown: a 400, nothing replayed.
    const other = await connect();
    for (const id of [lastEventId!, 'no-such-event']) {
      const refused = await resumeStream({ ...session, sessionId: other.transport.sessionId! }, id);
      expect(refused.status).toBe(400);
      expect(await refused.text()).toMatch(/Invalid event ID/);
    }
  });
});
