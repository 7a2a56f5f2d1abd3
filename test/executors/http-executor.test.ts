import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:http';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { gzipSync } from 'node:zlib';
import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { SideEffectClass } from '../../src/core/index.js';
import { GatewayEgress } from '../../src/egress/index.js';
import type { EgressDecision } from '../../src/egress/index.js';
import { HttpExecutor, upstreamIdempotencyKey } from '../../src/executors/index.js';
import type { HttpOutput } from '../../src/executors/http/http-response.js';
import { OutputCapture, judgeExecution } from '../../src/invocation/index.js';
import type { ExecutionRequest, ExecutionResult } from '../../src/invocation/index.js';
import { Redactor } from '../../src/secrets/index.js';
import { FileArtifactStore } from '../../src/storage/index.js';
import type { ToolDescriptor } from '../../src/tools/index.js';
import { collectGarbage } from '../helpers/memory.js';

const SECRET = 'tok-9f8e7d6c5b4a39281706f5e4d3c2b1a0';
const BIG = 20 * 1024 * 1024;

/** What the upstream saw of one request. */
interface Seen {
  method: string;
  url: string;
  headers: IncomingMessage['headers'];
  body: string;
}

type Handler = (req: IncomingMessage, res: ServerResponse, body: string) => void;

/** A loopback HTTP server whose answers each test sets, recording every request it read. */
async function upstream(): Promise<{
  server: Server;
  port: number;
  seen: Seen[];
  handle: (h: Handler) => void;
}> {
  const seen: Seen[] = [];
  let handler: Handler = (_req, res) => res.end();
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      seen.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers, body });
      handler(req, res, body);
    });
  });
  await new Promise<void>((ok) => server.listen(0, '127.0.0.1', () => ok()));
  return {
    server,
    port: (server.address() as AddressInfo).port,
    seen,
    handle: (h) => {
      handler = h;
    },
  };
}

function closeServer(server: Server): Promise<void> {
  server.closeAllConnections();
  return new Promise((ok) => server.close(() => ok()));
}

let api: Awaited<ReturnType<typeof upstream>>;
let other: Awaited<ReturnType<typeof upstream>>;
let dir: string;
let artifacts: FileArtifactStore;
let allow: string[];
const names: Record<string, string[]> = {};

beforeAll(async () => {
  api = await upstream();
  other = await upstream();
  dir = mkdtempSync(join(tmpdir(), 'gatehouse-http-exec-'));
  artifacts = new FileArtifactStore(dir);
  // Test names resolve through this map only: never an outside DNS server.
  names['tickets.test'] = ['127.0.0.1'];
  names['elsewhere.test'] = ['127.0.0.1'];
});
afterAll(async () => {
  await closeServer(api.server);
  await closeServer(other.server);
  rmSync(dir, { recursive: true, force: true });
});
beforeEach(() => {
  api.seen.length = 0;
  other.seen.length = 0;
  // The name and its loopback address are both listed, as an operator lists a local service.
  allow = [`tickets.test:${api.port}`, `127.0.0.1:${api.port}`];
});

const egress = new GatewayEgress({
  allow: () => allow,
  resolve: (host) => {
    const answer = names[host];
    return answer
      ? Promise.resolve(answer)
      : Promise.reject(Object.assign(new Error('no such host'), { code: 'ENOTFOUND' }));
  },
});
const executor = new HttpExecutor({ egress });

function descriptor(
  execution: Record<string, unknown>,
  o: {
    class?: SideEffectClass;
    inputSchema?: Record<string, unknown>;
    credentials?: unknown[];
  } = {},
): ToolDescriptor {
  return {
    id: 'acme/tickets',
    version: '1.0.0',
    kind: 'http',
    description: 'tickets',
    inputSchema: o.inputSchema ?? {
      type: 'object',
      properties: {
        id: { type: 'string' },
        state: { type: 'string' },
        trace: { type: 'string' },
        ticket: { type: 'object', properties: { title: { type: 'string' } } },
      },
    },
    sideEffect: { class: o.class ?? 'read' },
    execution,
    ...(o.credentials ? { credentials: o.credentials as Record<string, unknown>[] } : {}),
  };
}

interface Run {
  result: ExecutionResult;
  egress: EgressDecision[];
}

async function run(
  d: ToolDescriptor,
  input: unknown,
  o: {
    signal?: AbortSignal;
    key?: string;
    headers?: ExecutionRequest['headers'];
    secrets?: { name: string; value: string }[];
  } = {},
): Promise<Run> {
  const decisions: EgressDecision[] = [];
  const redactor = new Redactor(o.secrets ?? []);
  const request: ExecutionRequest = {
    invocationId: 'inv-1',
    tenant: 'acme',
    project: 'web',
    environment: {
      tenant: 'acme',
      project: 'web',
      name: 'dev',
      class: 'development',
      frozen: false,
    },
    agent: { id: 'coder', version: '1.0.0' },
    descriptor: d,
    input,
    requestHash: 'hash-1',
    idempotencyKey: o.key ?? 'key-1',
    effectiveClass: d.sideEffect.class,
    signal: o.signal ?? new AbortController().signal,
    timeoutMs: 5000,
    ...(o.headers ? { headers: o.headers } : {}),
    onEgress: (decision) => decisions.push(decision),
    capture: () => new OutputCapture(artifacts, redactor.stream(), 4096),
    redact: (value) => redactor.redactJson(value).value,
    redactAlso: () => {},
  };
  // The executor reports facts; the pipeline's one rule decides the outcome.
  const result = judgeExecution(await executor.execute(request), request.effectiveClass);
  return { result, egress: decisions };
}

function output(r: ExecutionResult): HttpOutput {
  return r.output as never;
}

/** A GET of the upstream's `/whoami` holding the brokered `tickets-token` as its bearer token. */
function whoamiWithToken(): ReturnType<typeof run> {
  const d = descriptor(
    { method: 'GET', url: `http://tickets.test:${api.port}/whoami` },
    {
      credentials: [
        {
          ref: 'tickets-token',
          scope: 'read',
          inject: { header: 'Authorization', format: 'Bearer {value}' },
        },
      ],
    },
  );
  return run(
    d,
    {},
    {
      headers: [{ name: 'Authorization', value: `Bearer ${SECRET}` }],
      secrets: [{ name: 'tickets-token', value: SECRET }],
    },
  );
}

describe('the http executor', () => {
  it('fills the URL template, query and headers from the input and observes a 2xx', async () => {
    api.handle((_req, res) => {
      res.writeHead(200, {
        'content-type': 'application/json',
        etag: '"v7"',
        'set-cookie': 'session=abc',
        'x-request-id': 'req-1',
      });
      res.end(JSON.stringify({ id: 'T 1/2', state: 'open' }));
    });
    const d = descriptor({
      method: 'GET',
      url: `http://tickets.test:${api.port}/tickets/{id}{?state}`,
      headers: { 'X-Trace': '/trace' },
    });
    const { result, egress: decisions } = await run(d, {
      id: 'T 1/2',
      state: 'open',
      trace: 't-9',
    });
    expect(result.status).toBe('observed');
    expect(api.seen[0]).toMatchObject({ method: 'GET', url: '/tickets/T%201%2F2?state=open' });
    expect(api.seen[0]!.headers).toMatchObject({
      host: `tickets.test:${api.port}`,
      'x-trace': 't-9',
    });
    // A read call sends no Idempotency-Key.
    expect(api.seen[0]!.headers['idempotency-key']).toBeUndefined();
    const out = output(result);
    expect(out.status).toBe(200);
    expect(out.body).toEqual({ id: 'T 1/2', state: 'open' });
    expect(out.headers).toEqual({
      'content-type': 'application/json',
      'content-length': out.headers['content-length'],
      etag: '"v7"',
      'x-request-id': 'req-1',
    });
    expect(decisions).toHaveLength(1);
    expect(decisions[0]).toMatchObject({
      host: 'tickets.test',
      port: api.port,
      allowed: true,
      address: '127.0.0.1',
    });
  });

  it('reports a declared failure status as failed with the status and the body message', async () => {
    api.handle((_req, res) => {
      res.writeHead(404, { 'content-type': 'application/problem+json' });
      res.end(JSON.stringify({ title: 'Not Found', detail: 'no ticket T-404' }));
    });
    const d = descriptor(
      { method: 'POST', url: `http://tickets.test:${api.port}/tickets/{id}/close` },
      { class: 'shared-write' },
    );
    const { result } = await run(d, { id: 'T-404' });
    expect(result).toMatchObject({ status: 'failed', code: 'HTTP_404' });
    expect(result.status === 'failed' && result.message).toMatch(
      /answered 404 \(no ticket T-404\), which the descriptor declares a failure/,
    );
    expect(output(result).status).toBe(404);
  });

  it('makes a write call whose connection resets after the request uncertain, sending the same Idempotency-Key on every attempt', async () => {
    api.handle((req) => req.socket.destroy());
    const d = descriptor(
      { method: 'POST', url: `http://tickets.test:${api.port}/tickets`, body: '/ticket' },
      { class: 'shared-write' },
    );
    const first = await run(d, { ticket: { title: 'printer on fire' } });
    expect(first.result).toMatchObject({ status: 'uncertain', code: 'CONNECTION_LOST' });
    expect(api.seen[0]!.body).toBe('{"title":"printer on fire"}');
    const expected = upstreamIdempotencyKey('acme', 'key-1', 'hash-1');
    expect(api.seen[0]!.headers['idempotency-key']).toBe(expected);
    const second = await run(d, { ticket: { title: 'printer on fire' } });
    expect(second.result.status).toBe('uncertain');
    expect(api.seen[1]!.headers['idempotency-key']).toBe(expected);
    // Another caller's key is another request: another upstream key.
    await run(d, { ticket: { title: 'printer on fire' } }, { key: 'key-2' });
    expect(api.seen[2]!.headers['idempotency-key']).not.toBe(expected);
  });

  it('makes an undeclared status of a write call uncertain, and of a read call failed', async () => {
    api.handle((_req, res) =>
      res.writeHead(502, { 'content-type': 'text/plain' }).end('bad gateway'),
    );
    const url = `http://tickets.test:${api.port}/tickets`;
    const write = await run(descriptor({ method: 'POST', url }, { class: 'shared-write' }), {});
    expect(write.result).toMatchObject({ status: 'uncertain', code: 'HTTP_502' });
    const read = await run(descriptor({ method: 'GET', url }), {});
    expect(read.result).toMatchObject({ status: 'failed', code: 'HTTP_502' });
  });

  it('fails a read call that times out, and makes a write call that times out uncertain', async () => {
    api.handle(() => undefined); // never answers
    const url = `http://tickets.test:${api.port}/slow`;
    const read = await run(
      descriptor({ method: 'GET', url }),
      {},
      { signal: AbortSignal.timeout(150) },
    );
    expect(read.result).toMatchObject({ status: 'failed', code: 'TIMEOUT' });
    const write = await run(
      descriptor({ method: 'PUT', url }, { class: 'shared-write' }),
      {},
      { signal: AbortSignal.timeout(150) },
    );
    expect(write.result).toMatchObject({ status: 'uncertain', code: 'TIMEOUT' });
  });

  it('fails a call whose connection is refused before anything was sent, even a write', async () => {
    const closed = await upstream();
    const port = closed.port;
    await closeServer(closed.server);
    allow = [`127.0.0.1:${port}`];
    const write = await run(
      descriptor({ method: 'POST', url: `http://127.0.0.1:${port}/x` }, { class: 'shared-write' }),
      {},
    );
    expect(write.result).toMatchObject({ status: 'failed', code: 'CONNECTION_FAILED' });
  });

  it('refuses a redirect to another origin and records the refusal', async () => {
    allow.push(`elsewhere.test:${other.port}`, `127.0.0.1:${other.port}`);
    api.handle((_req, res) =>
      res.writeHead(302, { location: `http://elsewhere.test:${other.port}/steal` }).end(),
    );
    const d = descriptor({ method: 'GET', url: `http://tickets.test:${api.port}/tickets` });
    const { result, egress: decisions } = await run(d, {});
    expect(result).toMatchObject({ status: 'failed', code: 'REDIRECT_REFUSED' });
    expect(other.seen).toHaveLength(0);
    expect(decisions.map((x) => x.allowed)).toEqual([true, false]);
    expect(decisions[1]).toMatchObject({ host: 'elsewhere.test', port: other.port });
  });

  it('follows a redirect within the origin', async () => {
    api.handle((req, res) => {
      if (req.url === '/old') res.writeHead(301, { location: '/new' }).end();
      else res.writeHead(200, { 'content-type': 'text/plain' }).end('moved here');
    });
    const d = descriptor({ method: 'GET', url: `http://tickets.test:${api.port}/old` });
    const { result } = await run(d, {});
    expect(result.status).toBe('observed');
    expect(output(result).body).toBe('moved here');
    expect(api.seen.map((s) => s.url)).toEqual(['/old', '/new']);
  });

  it('refuses a name that resolves to loopback when only the name is listed', async () => {
    allow = [`tickets.test:${api.port}`];
    const d = descriptor({ method: 'GET', url: `http://tickets.test:${api.port}/tickets` });
    const { result, egress: decisions } = await run(d, {});
    expect(result).toMatchObject({ status: 'failed', code: 'EGRESS_REFUSED' });
    expect(result.status === 'failed' && result.message).toMatch(
      /resolves to 127\.0\.0\.1, a loopback/,
    );
    expect(decisions).toMatchObject([{ host: 'tickets.test', allowed: false }]);
    expect(api.seen).toHaveLength(0);
  });

  it('refuses a host that is not in the allow-list, sending nothing', async () => {
    const d = descriptor({ method: 'GET', url: `http://elsewhere.test:${other.port}/x` });
    const { result } = await run(d, {});
    expect(result).toMatchObject({ status: 'failed', code: 'EGRESS_REFUSED' });
    expect(result.status === 'failed' && result.message).toMatch(/not in the egress allow-list/);
    expect(other.seen).toHaveLength(0);
  });

  it('refuses an input that makes a "." or ".." path segment (which would leave the templated path), sending nothing', async () => {
    api.handle((_req, res) => res.writeHead(200, { 'content-type': 'text/plain' }).end('ok'));
    const at = `http://tickets.test:${api.port}`;
    const attempts: [string, string][] = [
      [`${at}/tickets/{id}/comments`, '..'],
      [`${at}/tickets/{id}/comments`, '.'],
      [`${at}/tickets{/id}/comments`, '..'],
      [`${at}/tickets/{+id}/comments`, '../admin'],
      [`${at}/tickets/{+id}/comments`, '%2e%2e/admin'],
      [`${at}/tickets/{+id}/comments`, 'a/.%2E'],
      [`${at}/tickets/.{id}/comments`, '.'],
      [`${at}/tickets/{.id}`, '.'],
      // Filled as ..%2Fadmin and ..;: a server that decodes %2F or splits at ";" climbs too.
      [`${at}/tickets/{id}/comments`, '../admin'],
      [`${at}/tickets/{+id}/comments`, '..;/admin'],
      [`${at}/tickets/{id}/comments`, 'x/../../admin'],
    ];
    for (const [url, id] of attempts) {
      const { result, egress: decisions } = await run(descriptor({ method: 'GET', url }), { id });
      expect(result, `${url} with id ${JSON.stringify(id)}`).toMatchObject({
        status: 'failed',
        code: 'INVALID_REQUEST',
      });
      expect(result.status === 'failed' && result.message).toMatch(/"\." or "\.\." path segment/);
      expect(decisions).toHaveLength(0);
    }
    expect(api.seen).toHaveLength(0);
    // Dots inside a segment are a name like any other.
    const { result } = await run(descriptor({ method: 'GET', url: attempts[0]![0] }), {
      id: '..v2',
    });
    expect(result.status).toBe('observed');
    expect(api.seen.map((s) => s.url)).toEqual(['/tickets/..v2/comments']);
  });

  it('refuses a header value HTTP cannot carry before connecting, never making a write uncertain', async () => {
    const d = descriptor(
      {
        method: 'POST',
        url: `http://tickets.test:${api.port}/tickets`,
        headers: { 'X-Trace': '/trace' },
      },
      { class: 'shared-write' },
    );
    for (const trace of ['caf\u20ac', 'a\u0001b', 'a\u007fb']) {
      const { result, egress: decisions } = await run(d, { trace });
      expect(result, JSON.stringify(trace)).toMatchObject({
        status: 'failed',
        code: 'INVALID_REQUEST',
      });
      expect(result.status === 'failed' && result.message).toMatch(/X-Trace \(\/trace\)/);
      expect(decisions).toHaveLength(0);
    }
    // A brokered header the request cannot carry fails before anything is sent, too.
    const brokered = await run(
      d,
      {},
      { headers: [{ name: 'Authorization', value: 'Bearer \u20ac' }] },
    );
    expect(brokered.result).toMatchObject({ status: 'failed', code: 'CONNECTION_FAILED' });
    expect(api.seen).toHaveLength(0);
  });

  it('sends the brokered credential header and redacts it when the upstream echoes it', async () => {
    api.handle((req, res) => {
      const auth = req.headers.authorization ?? '';
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(
        JSON.stringify({
          plain: auth,
          base64: Buffer.from(auth.replace(/^Bearer /, '')).toString('base64'),
        }),
      );
    });
    const { result } = await whoamiWithToken();
    expect(api.seen[0]!.headers.authorization).toBe(`Bearer ${SECRET}`);
    expect(result.status).toBe('observed');
    const text = JSON.stringify(result.output);
    expect(text).not.toContain(SECRET);
    expect(text).not.toContain(Buffer.from(SECRET).toString('base64'));
    // The echo is still there, with the value replaced by the redactor's marker.
    const echoed = (output(result).body as { plain: string }).plain;
    expect(echoed).toMatch(/^Bearer \S+$/);
    expect(echoed).not.toBe(`Bearer ${SECRET}`);
  });

  it('sends a credential only to the exact origin it is bound to: not to another port or plain http of its host', async () => {
    api.handle((_req, res) => res.writeHead(200, { 'content-type': 'text/plain' }).end('ok'));
    const d = descriptor({ method: 'GET', url: `http://tickets.test:${api.port}/whoami` });
    const headers = [
      // What the broker issues for `host: tickets.test` (https on 443 only)…
      { origin: 'https://tickets.test:443', name: 'Authorization', value: `Bearer ${SECRET}` },
      // …and for `origin: http://tickets.test:<another port>`.
      { origin: `http://tickets.test:${other.port}`, name: 'X-Api-Key', value: SECRET },
      { origin: `http://tickets.test:${api.port}`, name: 'X-Here', value: 'bound-here' },
    ];
    const { result } = await run(d, {}, { headers, secrets: [{ name: 't', value: SECRET }] });
    expect(result.status).toBe('observed');
    expect(api.seen[0]!.headers.authorization).toBeUndefined();
    expect(api.seen[0]!.headers['x-api-key']).toBeUndefined();
    expect(api.seen[0]!.headers['x-here']).toBe('bound-here');
  });

  it('does not carry a credential through a redirect to another port of the same host', async () => {
    allow.push(`tickets.test:${other.port}`);
    api.handle((_req, res) =>
      res.writeHead(307, { location: `http://tickets.test:${other.port}/steal` }).end(),
    );
    const d = descriptor({ method: 'GET', url: `http://tickets.test:${api.port}/whoami` });
    const headers = [{ name: 'Authorization', value: `Bearer ${SECRET}` }];
    const { result, egress: decisions } = await run(d, {}, { headers });
    expect(result).toMatchObject({ status: 'failed', code: 'REDIRECT_REFUSED' });
    expect(api.seen[0]!.headers.authorization).toBe(`Bearer ${SECRET}`);
    expect(other.seen).toHaveLength(0);
    expect(decisions[1]).toMatchObject({ host: 'tickets.test', port: other.port, allowed: false });
  });

  it('withholds a compressed body of an answer to a request carrying a brokered header (it asked for identity)', async () => {
    api.handle((req, res) => {
      res.writeHead(200, { 'content-type': 'application/json', 'content-encoding': 'gzip' });
      res.end(gzipSync(JSON.stringify({ echoed: req.headers.authorization })));
    });
    const { result } = await whoamiWithToken();
    expect(api.seen[0]!.headers['accept-encoding']).toBe('identity');
    expect(result.status).toBe('observed');
    expect(output(result)).toMatchObject({ status: 200, body: null });
    expect(output(result).bodyWithheld).toMatch(/content-encoding gzip .* withheld/);
    expect(JSON.stringify(result)).not.toContain('artifact');
  });

  it('shows a compressed answer when the only brokered headers are bound to other origins (none was sent)', async () => {
    api.handle((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/plain', 'content-encoding': 'gzip' });
      res.end(gzipSync('plain news'));
    });
    const d = descriptor({ method: 'GET', url: `http://tickets.test:${api.port}/whoami` });
    const headers = [
      { origin: 'https://tickets.test:443', name: 'Authorization', value: `Bearer ${SECRET}` },
    ];
    const { result } = await run(d, {}, { headers });
    expect(api.seen[0]!.headers.authorization).toBeUndefined();
    expect(result.status).toBe('observed');
    expect(output(result).bodyWithheld).toBeUndefined();
    // Nothing brokered went out, so nothing could be echoed: the body is shown as it came.
    expect(output(result).body).not.toBeNull();
  });

  it('streams a 20 MB response: observed, cut to the bound, the artifact holds it whole', async () => {
    // The upstream runs in its own process, so the growth measured is the executor's alone.
    await using flood = await floodServer();
    allow = [`127.0.0.1:${flood.port}`];
    const d = descriptor({ method: 'GET', url: `http://127.0.0.1:${flood.port}/export` });
    // One response first: the allocator's and the fetch stack's first-use pools are not growth
    // per response (RSS does not shrink after them). Collected garbage is not growth either:
    // collect before both readings.
    expect((await run(d, {})).result.status).toBe('observed');
    await collectGarbage();
    const before = process.memoryUsage();
    const { result } = await run(d, {});
    await collectGarbage();
    const after = process.memoryUsage();
    const growth = after.rss - before.rss;
    const retained = after.heapUsed + after.arrayBuffers - before.heapUsed - before.arrayBuffers;
    expect(result.status).toBe('observed');
    const out = output(result);
    expect(out.bodyTruncated?.bytes).toBe(BIG);
    expect((out.body as string).length).toBeLessThanOrEqual(4096);
    expect(growth).toBeLessThan(32 * 1024 * 1024);
    // Less than the body: it was never held whole.
    expect(retained).toBeLessThan(16 * 1024 * 1024);
    const whole = await artifacts.get(out.bodyTruncated!.artifact!);
    expect(whole?.length).toBe(BIG);
    const chunk = Buffer.alloc(64 * 1024, 'abcdefghij');
    const expected = createHash('sha256');
    for (let i = 0; i < BIG / chunk.length; i++) expected.update(chunk);
    expect(createHash('sha256').update(whole!).digest('hex')).toBe(expected.digest('hex'));
  });
});

/** A loopback server in a child process that answers every request with {@link BIG} bytes. */
async function floodServer(): Promise<{ port: number } & AsyncDisposable> {
  const code = `
    const chunk = Buffer.alloc(64 * 1024, 'abcdefghij');
    const server = require('node:http').createServer((req, res) => {
      res.writeHead(200, { 'content-type': 'text/plain' });
      let sent = 0;
      const more = () => {
        while (sent < ${BIG}) {
          sent += chunk.length;
          if (!res.write(chunk)) return void res.once('drain', more);
        }
        res.end();
      };
      more();
    });
    server.listen(0, '127.0.0.1', () => process.stdout.write(server.address().port + '\\n'));
  `;
  const child = spawn(process.execPath, ['-e', code], { stdio: ['ignore', 'pipe', 'inherit'] });
  const port = await new Promise<number>((ok, fail) => {
    child.stdout.once('data', (b: Buffer) => ok(Number(b.toString().trim())));
    child.once('exit', (c) => fail(new Error(`the flood server exited with ${c}`)));
  });
  return {
    port,
    [Symbol.asyncDispose]: async () => {
      if (child.exitCode !== null) return;
      const exited = new Promise((ok) => child.once('exit', ok));
      child.kill();
      await exited;
    },
  };
}

describe('http descriptors at publication', () => {
  const url = 'https://api.example.com/tickets/{id}{?state}';
  it('accepts a template and pointers the input schema can have', () => {
    expect(
      executor.check(
        descriptor({ method: 'POST', url, query: { trace: '/trace' }, body: '/ticket/title' }),
      ),
    ).toBeNull();
  });

  it('refuses a header credential bound to another origin than the URL, and a URL with user info', () => {
    const bound = (inject: Record<string, unknown>) =>
      executor.check(
        descriptor(
          { method: 'GET', url: 'http://api.example.com:8080/tickets' },
          { credentials: [{ ref: 'k', scope: 's', inject: { header: 'X-Key', ...inject } }] },
        ),
      );
    // A host alone means https on 443: never this cleartext port 8080.
    expect(bound({ host: 'api.example.com' })).toMatch(
      /credentials\/0 is bound to https:\/\/api\.example\.com:443, but execution\.url is at http:\/\/api\.example\.com:8080/,
    );
    expect(bound({ origin: 'http://api.example.com' })).toMatch(
      /bound to http:\/\/api\.example\.com:80,/,
    );
    expect(bound({ origin: 'http://API.example.com.:8080/' })).toBeNull();
    expect(bound({})).toBeNull();
    expect(
      executor.check(descriptor({ method: 'GET', url: 'https://u:p@api.example.com/tickets' })),
    ).toMatch(/user name or password/);
  });

  it.each([
    [
      { method: 'GET', url: 'https://api.example.com/tickets/{ticketId}' },
      /variable \{ticketId\}, which the input schema does not declare/,
    ],
    [
      { method: 'GET', url, query: { q: '/search' } },
      /execution\.query\.q is "\/search", which the input schema cannot have/,
    ],
    [{ method: 'POST', url, body: '/ticket/body' }, /execution\.body is "\/ticket\/body"/],
    [
      { method: 'GET', url, headers: { 'X-T': 'trace' } },
      /execution\.headers\.X-T is "trace", not a JSON pointer/,
    ],
    [{ method: 'GET', url: 'https://{id}.example.com/x' }, /execution\.url must start with http/],
    [{ method: 'GET', url: 'https://api.example.com{+id}' }, /variable right after the host/],
    [{ method: 'GET', url: 'https://api.example.com/{id' }, /unbalanced/],
    [
      { method: 'GET', url: 'https://api.example.com/a/%2E./{id}' },
      /execution\.url has a "\." or "\.\." path segment/,
    ],
    [{ method: 'GET', url, headers: { Host: '/id' } }, /the Host header is set by the gateway/],
    [{ method: 'FETCH', url }, /execution\.method is "FETCH"/],
    [{ method: 'GET', url, failureStatuses: [200] }, /failureStatuses/],
  ])('refuses %j', (execution, message) => {
    expect(executor.check(descriptor(execution))).toMatch(message);
  });
});
