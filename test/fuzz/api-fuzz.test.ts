import { Agent, request as httpRequest } from 'node:http';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, startDemoGateway } from '../helpers/gateway-fixture.js';
import type { DemoGateway } from '../helpers/gateway-fixture.js';
import { parseRpc } from '../helpers/mcp-client.js';
import { describeMcp, mcpRequest } from './mcp-requests.js';
import type { McpFuzzRequest } from './mcp-requests.js';
import { describeRequest, encodeLoose, operationsOf, restRequest } from './rest-requests.js';
import type { FuzzRequest, Pools } from './rest-requests.js';

/**
 * Generated requests over every REST operation of /openapi.json and over /mcp, against a real
 * demo gateway: none may be answered with a 5xx, and the gateway must still answer at the end.
 * Most go in process (`inject`), the rest over a real socket. FUZZ_SEED=N replays a run.
 */
const REST_IN_PROCESS = 8_400;
const REST_OVER_SOCKET = 400;
const MCP_OVER_SOCKET = 1_200;
const seed = Number(process.env.FUZZ_SEED ?? Date.now() % 2 ** 31);

let g: DemoGateway;
let pools: Pools;
let toolNames: string[];
const agent = new Agent({ keepAlive: true, maxSockets: 4 });
const tally = new Map<number, number>();
let sent = 0;
const phases: string[] = [];

interface Answer {
  status: number;
  body: string;
  headers: Record<string, unknown>;
}

beforeAll(async () => {
  g = await startDemoGateway({ listen: true });
  const t = g.tokens;
  const tools = await g.inject<{ tools: { id: string; version: string; kind: string }[] }>(
    'GET',
    '/v1/tools',
    { token: t.admin },
  );
  const echo = await g.invoke(t.agent, 'fuzz-seed-1', call('demo/echo', { message: 'seed' }));
  const proposal = await g.invoke(
    t.agent,
    'fuzz-seed-2',
    call('demo/propose-change', { title: 't', diff: 'd' }),
  );
  const servers = await g.inject<{ servers: { id: string }[] }>('GET', '/v1/mcp-servers', {
    token: t.admin,
  });
  pools = {
    tokens: { ...t },
    tools: tools.body.tools
      .filter((d) => d.kind === 'native' && d.id !== 'demo/sleep')
      .map((d) => ({ id: d.id, version: d.version })),
    words: [
      // Not demo/sleep: a call of it may rightly take minutes.
      ...tools.body.tools.filter((d) => d.id !== 'demo/sleep').flatMap((d) => [d.id, d.version]),
      echo.body.id,
      proposal.body.id,
      String((proposal.body as { approvalId?: string }).approvalId),
      ...servers.body.servers.map((s) => s.id),
      'web',
      'dev',
      'prod',
      'demo-token',
      'acme',
      '1',
      '0',
    ],
  };
  const session = await mcpSession();
  const listed = await mcp(
    {
      method: 'POST',
      session: 'valid',
      token: t.agent,
      accept: 'application/json, text/event-stream',
    },
    session,
    { jsonrpc: '2.0', id: 2, method: 'tools/list' },
  );
  const answer = parseRpc(listed.body, listed.headers['content-type'] as string | undefined);
  toolNames = (answer as { result: { tools: { name: string }[] } }).result.tools
    .map((x) => x.name)
    .filter((n) => !/sleep|sh_|git|browser|computer|long/.test(n));
  expect(toolNames.length).toBeGreaterThan(0);
}, 120_000);

afterAll(async () => {
  agent.destroy();
  const counts = [...tally.entries()].sort(([a], [b]) => a - b).map(([s, n]) => `${s}×${n}`);
  console.log(
    `fuzz: ${sent} requests (seed ${seed}); statuses ${counts.join(' ')}; done at ${phases.join(', ')}`,
  );
  await g?.close();
});

function record(status: number): void {
  sent += 1;
  tally.set(status, (tally.get(status) ?? 0) + 1);
}

/** Fails with the request and the answer when the gateway answered 5xx. */
function check(what: string, a: Answer): void {
  record(a.status);
  if (a.status >= 500) throw new Error(`${what} answered ${a.status}: ${a.body.slice(0, 500)}`);
}

async function injectRest(r: FuzzRequest): Promise<Answer> {
  const res = await g.gateway.server.inject({
    method: r.method as 'GET',
    url: r.url,
    headers: r.headers,
    ...(r.body ? { payload: r.body } : {}),
  });
  return { status: res.statusCode, body: res.body, headers: res.headers };
}

/** `answer`, or a failure naming the request when no answer came within 10 s (a hang). */
async function inTime(what: string, answer: Promise<Answer>): Promise<Answer> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what}: no answer within 10 s`)), 10_000);
  });
  try {
    return await Promise.race([answer, late]);
  } finally {
    clearTimeout(timer);
  }
}

/** One request over the real socket; an event stream is closed once its status arrived. */
function overSocket(
  method: string,
  path: string,
  headers: Record<string, string>,
  body?: Buffer,
): Promise<Answer> {
  const base = new URL(g.url!);
  // Node's client frames no body of GET, DELETE or OPTIONS unless told its length.
  if (body) headers = { ...headers, 'content-length': String(body.length) };
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      { host: base.hostname, port: base.port, method, path, headers, agent },
      (res) => {
        // A stream that stays open (GET /events/stream, GET /mcp) is not read; a POST /mcp
        // answer streamed as events ends with its result and is read whole.
        if (method === 'GET' && res.headers['content-type']?.startsWith('text/event-stream')) {
          res.destroy();
          return resolve({ status: res.statusCode!, body: '', headers: res.headers });
        }
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (d: string) => (text += d));
        res.on('end', () => resolve({ status: res.statusCode!, body: text, headers: res.headers }));
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

async function mcpSession(): Promise<string> {
  const res = await overSocket(
    'POST',
    '/mcp',
    {
      authorization: `Bearer ${g.tokens.agent}`,
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
    },
    Buffer.from(
      JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'initialize',
        params: {
          protocolVersion: '2025-06-18',
          capabilities: {},
          clientInfo: { name: 'fuzz', version: '1' },
        },
      }),
    ),
  );
  expect(res.status).toBe(200);
  return String(res.headers['mcp-session-id']);
}

async function mcp(r: McpFuzzRequest, session: string, message?: unknown): Promise<Answer> {
  const headers: Record<string, string> = {
    authorization: `Bearer ${r.token}`,
    'content-type': 'application/json',
    accept: r.accept,
  };
  if (r.session === 'valid') headers['mcp-session-id'] = session;
  else if (r.session !== 'none') headers['mcp-session-id'] = encodeLoose(r.session);
  if (r.protocolVersion) headers['mcp-protocol-version'] = r.protocolVersion;
  const body = message === undefined ? r.body : Buffer.from(JSON.stringify(message));
  return overSocket(r.method, '/mcp', headers, r.method === 'GET' ? undefined : body);
}

const isStream = (r: FuzzRequest) => r.method === 'GET' && r.url.startsWith('/v1/events/stream');

describe('fuzzing the REST API and /mcp', () => {
  it('answers no generated request with a 5xx, and stays up', async () => {
    const started = Date.now();
    const phase = (name: string) =>
      phases.push(`${name} ${((Date.now() - started) / 1000).toFixed(1)} s`);
    const doc = await g.inject<Parameters<typeof operationsOf>[0]>('GET', '/openapi.json');
    const ops = operationsOf(doc.body);
    expect(ops.length).toBeGreaterThan(25);
    const rest = restRequest(ops, pools);

    await fc.assert(
      fc.asyncProperty(rest, async (r) => {
        // An event stream that opens never ends in process; those go over the socket.
        const a = await inTime(
          describeRequest(r),
          isStream(r) ? overSocket(r.method, r.url, r.headers, r.body) : injectRest(r),
        );
        check(describeRequest(r), a);
      }),
      { numRuns: REST_IN_PROCESS, seed, endOnFailure: true },
    );

    phase('in process');
    let previous = '';
    await fc.assert(
      fc.asyncProperty(rest, async (r) => {
        try {
          check(
            describeRequest(r),
            await inTime(describeRequest(r), overSocket(r.method, r.url, r.headers, r.body)),
          );
        } catch (err) {
          throw new Error(`after ${previous}: ${String(err)}`);
        }
        previous = describeRequest(r);
      }),
      { numRuns: REST_OVER_SOCKET, seed: seed + 1, endOnFailure: true },
    );

    phase('over socket');
    let session = await mcpSession();
    await fc.assert(
      fc.asyncProperty(mcpRequest(pools, g.tokens.agent, toolNames), async (r) => {
        const a = await inTime(describeMcp(r), mcp(r, session));
        check(describeMcp(r), a);
        // A closed or evicted session is opened again, so most requests reach a live one.
        if (
          r.session === 'valid' &&
          (a.status === 404 || (r.method === 'DELETE' && a.status < 300))
        )
          session = await mcpSession();
      }),
      { numRuns: MCP_OVER_SOCKET, seed: seed + 2, endOnFailure: true },
    );

    phase('/mcp');
    const health = await overSocket('GET', '/healthz', {});
    expect(health.status).toBe(200);
    expect(sent).toBeGreaterThanOrEqual(10_000);
  }, 300_000);
});
