import { Writable } from 'node:stream';
import { afterEach, describe, expect, it } from 'vitest';
import { createLogger } from '../../src/app/index.js';
import { InvocationTrace, noopTracer } from '../../src/invocation/index.js';
import type { InvocationRecord } from '../../src/invocation/index.js';
import { Redactor } from '../../src/secrets/index.js';
import { call, startDemoGateway } from '../helpers/gateway-fixture.js';
import type { DemoGateway } from '../helpers/gateway-fixture.js';

const CALLER_TRACE = '0af7651916cd43dd8448eb211c80319c';
const TRACEPARENT = `00-${CALLER_TRACE}-b7ad6b7169203331-01`;
/** A GitHub token's shape (not a real one), which the known-pattern redactor removes. */
const GITHUB_TOKEN = `ghp_${'A1b2C3d4E5'.repeat(3)}abcdef`;

type Line = Record<string, unknown> & { level: number; msg: string };

/** A logger as the gateway makes it, writing its JSON lines into `lines`. */
function memoryLogger(level: 'info' | 'debug' = 'info') {
  const lines: Line[] = [];
  const text: string[] = [];
  const destination = new Writable({
    write(chunk: Buffer, _enc, done) {
      for (const l of chunk.toString('utf8').split('\n').filter(Boolean)) {
        text.push(l);
        lines.push(JSON.parse(l) as Line);
      }
      done();
    },
  });
  return { logger: createLogger({ level, destination }), lines, text };
}

let g: DemoGateway | undefined;
afterEach(async () => {
  await g?.close();
  g = undefined;
});

describe('structured JSON logs', { timeout: 120_000 }, () => {
  it('a call logs its outcome with the request id, the invocation id and the caller’s trace id', async () => {
    const { logger, lines, text } = memoryLogger();
    g = await startDemoGateway({ logger });
    const res = await g.inject<InvocationRecord>('POST', '/v1/invocations', {
      token: g.tokens.agent,
      body: call('demo/echo', { message: 'logged' }),
      headers: { 'idempotency-key': 'log-1', traceparent: TRACEPARENT },
    });
    expect(res.status).toBe(200);
    const requestId = res.headers['x-request-id'];
    expect(typeof requestId).toBe('string');
    const line = lines.find((l) => l.msg === 'invocation observed');
    expect(line).toMatchObject({
      level: 30,
      requestId,
      invocationId: res.body.id,
      traceId: CALLER_TRACE,
      tool: 'demo/echo@1.0.0',
      status: 'observed',
    });
    expect(Number.isNaN(Date.parse(line!.time as string))).toBe(false);
    // Each field once: the request's trace id is not repeated by the call's log.
    const raw = text.find((l) => l.includes('"invocation observed"'))!;
    expect(raw.match(/"traceId"/g)).toHaveLength(1);
  });

  it('a 500 names its request id, and the log line with that id holds the cause', async () => {
    const { logger, lines } = memoryLogger();
    g = await startDemoGateway({ logger });
    // Storage refusing writes is counted on /metrics (and answered 503 by the storage work).
    g.gateway.db.raw.pragma('query_only = ON');
    const refused = await g.invoke(g.tokens.agent, 'log-503', call('demo/echo', { message: 'x' }));
    expect(refused.status).toBeGreaterThanOrEqual(500);
    g.gateway.db.raw.pragma('query_only = OFF');
    const metrics = await g.inject<string>('GET', '/metrics');
    expect(metrics.body).toMatch(/gatehouse_storage_errors_total\{code="SQLITE_READONLY"\} [1-9]/);
    // A failure of Gatehouse itself: the database handle is gone under a read.
    g.gateway.db.raw.close();
    const res = await g.inject('GET', '/v1/invocations', { token: g.tokens.operator });
    expect(res.status).toBe(500);
    const body = res.body as { error: { message: string; details: { requestId: string } } };
    const requestId = res.headers['x-request-id'] as string;
    expect(body.error.details.requestId).toBe(requestId);
    expect(body.error.message).toContain(`request id ${requestId}`);
    const failed = lines.find((l) => l.requestId === requestId && l.msg === 'request failed');
    expect(failed?.level).toBe(50);
    expect((failed?.err as { message: string }).message).toMatch(/not open/);
  });

  it('no line carries a secret: known secret patterns and the Authorization header are removed', () => {
    const { logger, text } = memoryLogger('debug');
    logger.error(
      { err: new Error(`upstream said ${GITHUB_TOKEN}`) },
      `failed with ${GITHUB_TOKEN}`,
    );
    logger.info({ detail: { nested: [GITHUB_TOKEN] } }, 'fields');
    logger.info({ req: { headers: { authorization: 'Bearer s3cret-token' } } }, 'request');
    const all = text.join('\n');
    expect(text).toHaveLength(3);
    expect(all).not.toContain(GITHUB_TOKEN);
    expect(all).not.toContain('s3cret-token');
    // The message, the error's message and its stack (which repeats it), the nested field.
    expect(all.match(/\[REDACTED:[a-z-]+\]/g)?.length).toBe(4);
    expect(all).toContain('[REDACTED]');
  });

  it('a pass that throws logs its cause through the call’s own redactor (brokered values too)', () => {
    const { logger, lines, text } = memoryLogger();
    const secret = 'brokered-Value-7f3a9c';
    const record = {
      id: 'inv-1',
      tenant: 'acme',
      project: 'web',
      environment: 'dev',
      tool: { id: 'demo/echo', version: '1.0.0' },
      agent: { id: 'agent', version: '1' },
      attempt: 1,
    } as unknown as InvocationRecord;
    const traced = new InvocationTrace(noopTracer(), record, { log: logger }, undefined);
    traced.fail(
      new Error(`the tool printed ${secret}`),
      new Redactor([{ name: 'API_KEY', value: secret }]),
    );
    expect(text.join('\n')).not.toContain(secret);
    expect(lines[0]).toMatchObject({
      level: 50,
      invocationId: 'inv-1',
      msg: 'invocation pass failed',
    });
    expect((lines[0]?.err as { message: string }).message).toContain('[REDACTED:');
  });
});
