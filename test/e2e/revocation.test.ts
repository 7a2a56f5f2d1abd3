import { setTimeout as sleep } from 'node:timers/promises';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Approval } from '../../src/approvals/index.js';
import { verifyReceipt } from '../../src/audit/index.js';
import type { JwkSet } from '../../src/audit/index.js';
import type { InvocationRecord } from '../../src/invocation/index.js';
import { startDemoGateway } from '../helpers/gateway-fixture.js';
import type {
  DemoGateway,
  ErrorBody,
  InvokeAnswer,
  NativeRegistry,
} from '../helpers/gateway-fixture.js';

/** Tags of calls whose handler started, and of those whose AbortSignal fired. */
const started = new Set<string>();
const aborted = new Set<string>();
/** Opens the gate that `test.gate` calls wait on. */
let openGate: () => void = () => undefined;
let gate: Promise<void> = Promise.resolve();

function handlers(native: NativeRegistry): void {
  const watch = (tag: string, signal: AbortSignal) => {
    started.add(tag);
    signal.addEventListener('abort', () => aborted.add(tag), { once: true });
  };
  native
    .register('test.hold', async (input, ctx) => {
      const { tag } = input as { tag: string };
      watch(tag, ctx.signal);
      await sleep(120_000, undefined, { signal: ctx.signal });
      return { tag };
    })
    .register('test.gate', async (input, ctx) => {
      const { tag } = input as { tag: string };
      watch(tag, ctx.signal);
      await gate;
      return { tag, finished: true };
    })
    .register('test.quick', (input) => Promise.resolve({ tag: (input as { tag: string }).tag }));
}

function tool(id: string, cls: string, handler: string, version = '1.0.0') {
  return {
    id,
    version,
    kind: 'native',
    description: `${id}: a ${cls} test tool`,
    inputSchema: {
      type: 'object',
      required: ['tag'],
      additionalProperties: false,
      properties: { tag: { type: 'string' } },
    },
    sideEffect: { class: cls },
    execution: { handler },
    timeoutMs: 120_000,
  };
}

const TOOLS = [
  { d: tool('test/hold-write', 'workspace-write', 'test.hold'), inFlightPolicy: 'abort' },
  { d: tool('test/hold-read', 'read', 'test.hold'), inFlightPolicy: 'abort' },
  { d: tool('test/gate-finish', 'workspace-write', 'test.gate'), inFlightPolicy: 'finish' },
  { d: tool('test/shared-abort', 'shared-write', 'test.quick'), inFlightPolicy: 'abort' },
  { d: tool('test/shared-finish', 'shared-write', 'test.quick'), inFlightPolicy: 'finish' },
  { d: tool('test/old', 'read', 'test.quick'), inFlightPolicy: 'finish' },
];

let g: DemoGateway;
let agent: string;
beforeEach(async () => {
  started.clear();
  aborted.clear();
  gate = new Promise((resolve) => (openGate = resolve));
  g = await startDemoGateway({ nativeHandlers: handlers });
  const res = await g.inject('POST', '/v1/events', {
    token: g.tokens.admin,
    body: [
      ...TOOLS.map(({ d, inFlightPolicy }) => ({
        id: `test:${d.id}@${d.version}`,
        type: 'AssetReleasePublished',
        data: { assetId: d.id, version: d.version, descriptor: d, inFlightPolicy },
      })),
      {
        id: 'test:agent/revo-agent@1.0.0',
        type: 'AgentReleasePublished',
        data: {
          agentId: 'revo-agent',
          version: '1.0.0',
          closure: TOOLS.map(({ d }) => ({ id: d.id, version: d.version })),
          policy: { maxClass: 'shared-write' },
        },
      },
    ],
  });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  ({ token: agent } = await g.gateway.directory.addPrincipal(
    {
      tenant: 'acme',
      name: 'revo-agent',
      roles: ['agent'],
      project: 'web',
      agent: { id: 'revo-agent', version: '1.0.0' },
    },
    'test',
  ));
});
afterEach(async () => {
  openGate();
  await g.close();
});

function body(id: string, tag: string, extra: Record<string, unknown> = {}): unknown {
  return { tool: { id, version: '1.0.0' }, input: { tag }, environment: 'dev', ...extra };
}

async function waitFor(what: string, check: () => boolean | Promise<boolean>): Promise<void> {
  const deadline = Date.now() + 10_000;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting until ${what}`);
    await sleep(20);
  }
}

async function runningTools(): Promise<string[]> {
  const res = await g.inject<{ invocations: InvocationRecord[] }>(
    'GET',
    '/v1/invocations?status=running',
    { token: g.tokens.operator },
  );
  expect(res.status).toBe(200);
  return res.body.invocations.map((r) => r.tool.id);
}

function revoke(...ids: string[]) {
  return g.inject('POST', '/v1/events', {
    token: g.tokens.admin,
    body: ids.map((id) => ({
      id: `revoke:${id}`,
      type: 'AssetReleaseRevoked',
      data: { assetId: id, version: '1.0.0', reason: 'CVE-2026-4242' },
    })),
  });
}

async function approval(id: string): Promise<Approval> {
  const res = await g.inject<Approval>('GET', `/v1/approvals/${id}`, { token: g.tokens.reviewer });
  expect(res.status).toBe(200);
  return res.body;
}

async function waiting(
  key: string,
  b: unknown,
): Promise<InvocationRecord & { approvalId: string }> {
  const res = await g.invoke(agent, key, b);
  expect(res.status, JSON.stringify(res.body)).toBe(202);
  return res.body as InvocationRecord & { approvalId: string };
}

describe('AssetReleaseRevoked', () => {
  it("applies each release's in-flight policy to running calls and invalidates pending approvals", async () => {
    // Calls in flight, not awaited.
    const pWrite: Promise<InvokeAnswer> = g.invoke(
      agent,
      'w-1',
      body('test/hold-write', 'write-1'),
    );
    const pRead: Promise<InvokeAnswer> = g.invoke(agent, 'r-1', body('test/hold-read', 'read-1'));
    const pFinish: Promise<InvokeAnswer> = g.invoke(
      agent,
      'f-1',
      body('test/gate-finish', 'finish-1'),
    );
    await waitFor('the write and finish calls are recorded running', async () => {
      const tools = await runningTools();
      return tools.includes('test/hold-write') && tools.includes('test/gate-finish');
    });
    await waitFor('all three handlers started', () =>
      ['write-1', 'read-1', 'finish-1'].every((t) => started.has(t)),
    );

    // Approvals of a shared-write abort tool: one pending, one approved but not yet used.
    const pending = await waiting('s-1', body('test/shared-abort', 'pending'));
    const approvedCall = await waiting('s-2', body('test/shared-abort', 'approved'));
    const ok = await g.inject('POST', `/v1/approvals/${approvedCall.approvalId}/approve`, {
      token: g.tokens.reviewer,
      body: {},
    });
    expect(ok.status).toBe(200);
    // …and an approved one of a shared-write finish tool.
    const finishCall = await waiting('s-3', body('test/shared-finish', 'finish-approved'));
    expect(
      (
        await g.inject('POST', `/v1/approvals/${finishCall.approvalId}/approve`, {
          token: g.tokens.reviewer,
          body: {},
        })
      ).status,
    ).toBe(200);
    expect(aborted.size).toBe(0);
    const eventsBefore = await g.gateway.storage.outbox.latest('acme');

    const revoked = await revoke(
      'test/hold-write',
      'test/hold-read',
      'test/gate-finish',
      'test/shared-abort',
      'test/shared-finish',
    );
    expect(revoked.status, JSON.stringify(revoked.body)).toBe(200);

    // abort: the write call may have had an effect → uncertain; the read call → failed.
    const write = await pWrite;
    expect(write.status).toBe(200);
    expect(write.body).toMatchObject({
      status: 'uncertain',
      error: { code: 'REVOKED', stage: 'execute' },
    });
    expect(write.body.error?.message).toMatch(/revoked/);
    const read = await pRead;
    expect(read.status).toBe(200);
    expect(read.body).toMatchObject({
      status: 'failed',
      error: { code: 'REVOKED', stage: 'execute' },
    });
    expect([...aborted].sort()).toEqual(['read-1', 'write-1']);

    // finish: the call keeps running and ends normally.
    await sleep(100);
    expect(aborted.has('finish-1')).toBe(false);
    expect(await runningTools()).toEqual(['test/gate-finish']);
    openGate();
    const finish = await pFinish;
    expect(finish.status).toBe(200);
    expect(finish.body).toMatchObject({
      status: 'observed',
      output: { tag: 'finish-1', finished: true },
    });
    expect(await runningTools()).toEqual([]);

    // Approvals of the abort tool are invalidated; resuming with them is denied.
    for (const c of [pending, approvedCall]) {
      const a = await approval(c.approvalId);
      expect(a.status).toBe('invalidated');
      expect(a.statusReason).toMatch(/revoked: CVE-2026-4242/);
      const resumed = await g.invoke(agent, c.idempotencyKey, {
        ...(body(
          'test/shared-abort',
          c.idempotencyKey === 's-1' ? 'pending' : 'approved',
        ) as object),
        approvalId: c.approvalId,
      });
      expect(resumed.status, JSON.stringify(resumed.body)).toBe(403);
      expect(resumed.body).toMatchObject({
        id: c.id,
        status: 'denied',
        error: { code: 'APPROVAL_INVALIDATED', stage: 'approval' },
      });
    }
    const invalidatedEvents = (
      await g.gateway.storage.outbox.after('acme', eventsBefore, 1000)
    ).filter((e) => e.type === 'ApprovalDecided');
    expect(invalidatedEvents.map((e) => [e.data.approvalId, e.data.status]).sort()).toEqual(
      [
        [pending.approvalId, 'invalidated'],
        [approvedCall.approvalId, 'invalidated'],
      ].sort(),
    );
    // The finish tool's approval stands, but the call may not start on a revoked tool.
    expect((await approval(finishCall.approvalId)).status).toBe('approved');
    const late = await g.invoke(agent, 's-3', {
      ...(body('test/shared-finish', 'finish-approved') as object),
      approvalId: finishCall.approvalId,
    });
    expect(late.status).toBe(403);
    expect(late.body).toMatchObject({ status: 'denied', error: { code: 'TOOL_REVOKED' } });
    expect(g.executions('test.quick')).toBe(0);

    // No new invocation of any revoked tool.
    for (const id of [
      'test/hold-write',
      'test/hold-read',
      'test/gate-finish',
      'test/shared-abort',
    ]) {
      const fresh = await g.invoke(agent, `new-${id}`, body(id, 'after'));
      expect(fresh.status, id).toBe(403);
      expect(fresh.body).toMatchObject({
        status: 'denied',
        error: { code: 'TOOL_REVOKED', stage: 'permission' },
      });
    }
    expect(started.has('after')).toBe(false);

    // The uncertain write call blocks its retry until resolved.
    const retry = await g.invoke(agent, 'w-1', body('test/hold-write', 'write-1'));
    expect(retry.status).toBe(409);
    expect((retry.body as unknown as ErrorBody).error.code).toBe('EFFECT_UNCERTAIN');
    const uncertain = await g.inject<{ invocations: InvocationRecord[] }>('GET', '/v1/uncertain', {
      token: g.tokens.operator,
    });
    expect(uncertain.body.invocations.map((r) => r.id)).toEqual([write.body.id]);

    // Every outcome is receipted.
    const jwks = (await g.inject('GET', '/v1/receipt-keys')).body as JwkSet;
    for (const r of [write.body, read.body, finish.body]) {
      const envelope = (
        await g.inject('GET', `/v1/invocations/${r.id}/receipt`, { token: g.tokens.operator })
      ).body;
      const verdict = verifyReceipt(envelope, jwks);
      if (!verdict.ok) throw new Error(verdict.reason);
      expect(verdict.statement.predicate.status).toBe(r.status);
    }
  });

  it('of one tool leaves the running calls of other tools alone', async () => {
    const other = g.invoke(agent, 'f-other', body('test/gate-finish', 'other'));
    await waitFor('the other call started', () => started.has('other'));
    expect((await revoke('test/hold-read', 'test/hold-write')).status).toBe(200);
    await sleep(100);
    expect(aborted.size).toBe(0);
    expect(await runningTools()).toEqual(['test/gate-finish']);
    openGate();
    expect((await other).body).toMatchObject({ status: 'observed' });
  });
});

describe('AssetReleaseDeprecated', () => {
  it('keeps a pinned version callable, with a warning in the record, the trace and the receipt', async () => {
    const before = await g.invoke(agent, 'old-1', body('test/old', 'before'));
    expect(before.status).toBe(200);
    expect(before.body.warnings).toEqual([]);

    const dep = await g.inject('POST', '/v1/events', {
      token: g.tokens.admin,
      body: {
        id: 'deprecate:test/old@1.0.0',
        type: 'AssetReleaseDeprecated',
        data: { assetId: 'test/old', version: '1.0.0', reason: 'use test/old 2.x' },
      },
    });
    expect(dep.status, JSON.stringify(dep.body)).toBe(200);

    const after = await g.invoke(agent, 'old-2', body('test/old', 'after'));
    expect(after.status).toBe(200);
    expect(after.body.status).toBe('observed');
    expect(after.body.output).toEqual({ tag: 'after' });
    expect(after.body.warnings).toHaveLength(1);
    expect(after.body.warnings[0]).toMatch(
      /test\/old@1\.0\.0 is deprecated \(use test\/old 2\.x\)/,
    );
    const permission = after.body.trace.find((t) => t.stage === 'permission');
    expect(permission?.reason).toMatch(/deprecated/);
    expect(permission?.details).toMatchObject({ deprecated: true });

    const jwks = (await g.inject('GET', '/v1/receipt-keys')).body as JwkSet;
    const envelope = (
      await g.inject('GET', `/v1/invocations/${after.body.id}/receipt`, { token: agent })
    ).body;
    const verdict = verifyReceipt(envelope, jwks);
    if (!verdict.ok) throw new Error(verdict.reason);
    const stage = verdict.statement.predicate.stages.find((s) => s.stage === 'permission');
    expect(stage?.reason).toMatch(/deprecated/);

    // No new agent release may pin it.
    const pin = await g.inject<ErrorBody>('POST', '/v1/events', {
      token: g.tokens.admin,
      body: {
        id: 'test:agent/new-agent@1.0.0',
        type: 'AgentReleasePublished',
        data: {
          agentId: 'new-agent',
          version: '1.0.0',
          closure: [{ id: 'test/old', version: '1.0.0' }],
          policy: { maxClass: 'read' },
        },
      },
    });
    expect(pin.status).toBe(422);
    expect(pin.body.error.message).toMatch(/deprecated/);
  });
});
