import { createHash } from 'node:crypto';
import canonicalizeImpl from 'canonicalize';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { verifyReceipt } from '../../src/audit/index.js';
import type { JwkSet } from '../../src/audit/index.js';
import type { InvocationRecord } from '../../src/invocation/index.js';
import { call, startDemoGateway } from '../helpers/gateway-fixture.js';
import type { DemoGateway, ErrorBody } from '../helpers/gateway-fixture.js';

// canonicalize ships CommonJS typings with `export =`; at runtime the default import is the function.
const canonicalize = canonicalizeImpl as unknown as (value: unknown) => string;

// One gateway for the file: every test uses idempotency keys of its own, and what a test adds
// (a tool outside the closure, another tenant) changes no other test's answer.
let g: DemoGateway;
beforeAll(async () => {
  g = await startDemoGateway();
});
afterAll(async () => {
  await g?.close();
});

async function receiptOf(id: string): Promise<ReturnType<typeof verifyReceipt>> {
  const keys = await g.inject<JwkSet>('GET', '/v1/receipt-keys');
  const receipt = await g.inject('GET', `/v1/invocations/${id}/receipt`, {
    token: g.tokens.operator,
  });
  expect(receipt.status).toBe(200);
  return verifyReceipt(receipt.body, keys.body);
}

describe('POST /v1/invocations: an allowed call', () => {
  it('runs demo/echo through every stage and answers the observed record', async () => {
    const res = await g.invoke(g.tokens.agent, 'echo-1', call('demo/echo', { message: 'hello' }));
    expect(res.status).toBe(200);
    const r = res.body;
    expect(r.status).toBe('observed');
    expect(r.output).toEqual({ message: 'hello' });
    expect(r.trace.map((t) => `${t.stage}:${t.decision}`)).toEqual([
      'validation:pass',
      'permission:pass',
      'policy:pass',
      'classification:pass',
      'approval:not-required',
      'credentials:not-required',
      'sandbox:not-required',
      'execute:observed',
      'sanitize:pass',
      'audit:recorded',
    ]);
    for (const t of r.trace) {
      expect(t.reason.length).toBeGreaterThan(0);
      expect(Number.isNaN(Date.parse(t.at))).toBe(false);
    }
  });

  it('records who, what, where and the request hash anyone can recompute', async () => {
    const input = { message: 'héllo ✓' };
    const res = await g.invoke(g.tokens.agent, 'echo-fields', call('demo/echo', input));
    const r = res.body;
    expect(typeof r.id).toBe('string');
    expect(r).toMatchObject({
      status: 'observed',
      tenant: 'acme',
      project: 'web',
      environment: 'dev',
      agent: { id: 'demo-agent', version: '1.0.0' },
      tool: { id: 'demo/echo', version: '1.0.0' },
      input,
      idempotencyKey: 'echo-fields',
      effectiveClass: 'read',
      output: input,
    });
    const expected = createHash('sha256')
      .update(
        canonicalize({
          agent: { id: 'demo-agent', version: '1.0.0' },
          environment: 'dev',
          input,
          project: 'web',
          tenant: 'acme',
          tool: { id: 'demo/echo', version: '1.0.0' },
        }),
        'utf8',
      )
      .digest('hex');
    expect(r.requestHash).toBe(expected);

    const read = await g.inject<InvocationRecord>('GET', `/v1/invocations/${r.id}`, {
      token: g.tokens.operator,
    });
    expect(read.status).toBe(200);
    expect(read.body.requestHash).toBe(expected);
    expect(read.body.output).toEqual(input);

    const verdict = await receiptOf(r.id);
    expect(verdict.ok).toBe(true);
    if (verdict.ok) {
      expect(verdict.statement.subject[0].digest.sha256).toBe(expected);
      expect(verdict.statement.predicate.status).toBe('observed');
    }
  });
});

describe('POST /v1/invocations: denials are recorded, receipted, and say why', () => {
  async function expectDenied(
    key: string,
    body: unknown,
    status: number,
    code: string,
    stage: string,
  ): Promise<InvocationRecord> {
    const res = await g.invoke(g.tokens.agent, key, body);
    expect(res.status).toBe(status);
    expect(res.body.status).toBe('denied');
    expect(res.body.error?.code).toBe(code);
    expect(res.body.error?.stage).toBe(stage);
    const trace = res.body.trace;
    expect(trace.find((t) => t.stage === stage)?.decision).toBe('deny');
    expect(trace.at(-1)).toMatchObject({ stage: 'audit', decision: 'recorded' });
    expect(trace.some((t) => t.stage === 'execute')).toBe(false);
    const verdict = await receiptOf(res.body.id);
    expect(verdict).toMatchObject({ ok: true });
    if (verdict.ok) {
      expect(verdict.statement.predicate.status).toBe('denied');
      expect(verdict.statement.predicate.outcome.error?.code).toBe(code);
    }
    return res.body;
  }

  it('validation: 422 INVALID_INPUT with the pointer of every violation', async () => {
    const r = await expectDenied(
      'bad-input',
      call('demo/echo', { message: 42, extra: true }),
      422,
      'INVALID_INPUT',
      'validation',
    );
    const violations = r.error?.details?.violations as { pointer: string }[];
    expect(violations.map((v) => v.pointer).sort()).toEqual(['/extra', '/message']);
  });

  it('an unknown environment: 422 naming the known ones', async () => {
    const r = await expectDenied(
      'bad-env',
      call('demo/echo', { message: 'x' }, 'staging'),
      422,
      'UNKNOWN_ENVIRONMENT',
      'validation',
    );
    expect(r.error?.details?.known).toEqual(['dev', 'freeze', 'prod']);
  });

  it('a published tool outside the release closure: 403 PERMISSION_DENIED', async () => {
    const published = await g.inject('POST', '/v1/events', {
      token: g.tokens.admin,
      body: {
        id: 'test:demo/shout@1.0.0',
        type: 'AssetReleasePublished',
        data: {
          assetId: 'demo/shout',
          version: '1.0.0',
          inFlightPolicy: 'finish',
          descriptor: {
            id: 'demo/shout',
            version: '1.0.0',
            kind: 'native',
            description: 'Echo, but not in the demo agent closure.',
            inputSchema: { type: 'object', properties: { message: { type: 'string' } } },
            sideEffect: { class: 'read' },
            execution: { handler: 'demo.echo' },
          },
        },
      },
    });
    expect(published.status).toBe(200);
    const tools = await g.inject<{ tools: { id: string }[] }>('GET', '/v1/tools', {
      token: g.tokens.operator,
    });
    expect(tools.body.tools.map((t) => t.id)).toContain('demo/shout');
    await expectDenied(
      'not-in-closure',
      call('demo/shout', { message: 'x' }),
      403,
      'PERMISSION_DENIED',
      'permission',
    );
  });

  it('tenant policy: 403 POLICY_DENIED for a production change from dev', async () => {
    const r = await expectDenied(
      'policy',
      call('demo/propose-change', { title: 't', diff: 'd', target: 'main' }),
      403,
      'POLICY_DENIED',
      'policy',
    );
    expect(r.effectiveClass).toBe('production');
  });

  it('a frozen environment: 403 ENVIRONMENT_FROZEN for a shared-write', async () => {
    const r = await expectDenied(
      'frozen',
      call('demo/propose-change', { title: 't', diff: 'd' }, 'freeze'),
      403,
      'ENVIRONMENT_FROZEN',
      'classification',
    );
    // A shared-write into a production-class environment is production (DESIGN §3 stage 4).
    expect(r.effectiveClass).toBe('production');
  });

  it('the same call outside the frozen environment is not denied', async () => {
    const res = await g.invoke(
      g.tokens.agent,
      'unfrozen',
      call('demo/propose-change', { title: 't', diff: 'd' }, 'prod'),
    );
    // A production change may wait for approval; what matters is that nothing refused it.
    expect([200, 202]).toContain(res.status);
    expect(['observed', 'awaiting_approval']).toContain(res.body.status);
    expect(res.body.effectiveClass).toBe('production');
    expect(res.body.trace.find((t) => t.stage === 'classification')?.decision).toBe('pass');
  });
});

describe('POST /v1/invocations: refused requests', () => {
  it('without Idempotency-Key: 400 IDEMPOTENCY_KEY_REQUIRED, nothing recorded', async () => {
    const listed = async () =>
      (
        await g.inject<{ invocations: unknown[] }>('GET', '/v1/invocations', {
          token: g.tokens.operator,
        })
      ).body.invocations;
    const before = await listed();
    const res = await g.inject<ErrorBody>('POST', '/v1/invocations', {
      token: g.tokens.agent,
      body: call('demo/echo', { message: 'x' }),
    });
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe('IDEMPOTENCY_KEY_REQUIRED');
    expect(await listed()).toEqual(before);
  });

  it('a body that is not JSON: 400 INVALID_INPUT', async () => {
    const res = await g.inject<ErrorBody>('POST', '/v1/invocations', {
      token: g.tokens.agent,
      rawBody: '{"tool": {"id": "demo/echo"',
      headers: { 'idempotency-key': 'bad-json' },
    });
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe('INVALID_INPUT');
  });

  it('runId and attemptId: both or neither, each 1–255 printable ASCII; else 400 naming which', async () => {
    const cases: [Record<string, unknown>, string][] = [
      [{ runId: 'r' }, '/attemptId'],
      [{ attemptId: 'a' }, '/runId'],
      [{ runId: 'has space', attemptId: 'a' }, '/runId'],
      [{ runId: 'r', attemptId: 'x'.repeat(256) }, '/attemptId'],
    ];
    for (const [ids, pointer] of cases) {
      const res = await g.invoke(g.tokens.agent, `ids-${pointer}-${JSON.stringify(ids).length}`, {
        ...(call('demo/echo', { message: 'x' }) as object),
        ...ids,
      });
      expect(res.status, JSON.stringify(ids)).toBe(400);
      const body = res.body as unknown as ErrorBody;
      expect(body.error.code).toBe('INVALID_INPUT');
      expect(body.error.details.pointer).toBe(pointer);
    }
  });

  it('without a token or with a wrong one: 401', async () => {
    const body = call('demo/echo', { message: 'x' });
    const headers = { 'idempotency-key': 'k' };
    const none = await g.inject<ErrorBody>('POST', '/v1/invocations', { body, headers });
    expect(none.status).toBe(401);
    expect(none.body.error.code).toBe('UNAUTHENTICATED');
    const wrong = await g.inject<ErrorBody>('POST', '/v1/invocations', {
      token: `${g.tokens.agent}x`,
      body,
      headers,
    });
    expect(wrong.status).toBe(401);
    expect(wrong.body.error.code).toBe('UNAUTHENTICATED');
  });

  it('a reviewer may not invoke: 403', async () => {
    const res = await g.invoke(
      g.tokens.reviewer,
      'by-reviewer',
      call('demo/echo', { message: 'x' }),
    );
    expect(res.status).toBe(403);
    expect(res.body.error?.code).toBe('FORBIDDEN');
  });
});

describe('tenancy', () => {
  it("another tenant's operator cannot see acme's invocations", async () => {
    const made = await g.invoke(g.tokens.agent, 'mine', call('demo/echo', { message: 'secret' }));
    const id = made.body.id;
    const d = g.gateway.directory;
    await d.ensureTenant('globex', 'Globex', 'test');
    await d.ensureProject('globex', 'web', 'test');
    const { token } = await d.addPrincipal(
      { tenant: 'globex', name: 'globex-operator', roles: ['operator'] },
      'test',
    );

    const own = await g.inject('GET', `/v1/invocations/${id}`, { token: g.tokens.operator });
    expect(own.status).toBe(200);
    const other = await g.inject<ErrorBody>('GET', `/v1/invocations/${id}`, { token });
    expect(other.status).toBe(404);
    expect(other.body.error.code).toBe('NOT_FOUND');
    const receipt = await g.inject('GET', `/v1/invocations/${id}/receipt`, { token });
    expect(receipt.status).toBe(404);
    const list = await g.inject<{ invocations: unknown[] }>('GET', '/v1/invocations', { token });
    expect(list.status).toBe(200);
    expect(list.body.invocations).toEqual([]);
  });
});
