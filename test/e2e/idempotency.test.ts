import { setTimeout as sleep } from 'node:timers/promises';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Checkpoint } from '../../src/audit/index.js';
import type { InvocationRecord } from '../../src/invocation/index.js';
import { startDemoGateway } from '../helpers/gateway-fixture.js';
import type { DemoGateway, NativeRegistry } from '../helpers/gateway-fixture.js';

/** Executions of the `test.count` handler, across gateways of one test. */
let executions = 0;

function registerCount(native: NativeRegistry): void {
  native.register('test.count', async (input) => {
    executions += 1;
    // Long enough that concurrent duplicates overlap the execution.
    await sleep(50);
    return { n: executions, note: (input as { note: string }).note };
  });
}

const countTool = {
  id: 'test/count',
  version: '1.0.0',
  kind: 'native',
  description: 'Counts its executions.',
  inputSchema: {
    type: 'object',
    required: ['note'],
    additionalProperties: false,
    properties: { note: { type: 'string' } },
  },
  sideEffect: { class: 'workspace-write' },
  execution: { handler: 'test.count' },
};

/** Publishes test/count and an agent release pinning it; returns that agent's token. */
async function publishCounter(g: DemoGateway): Promise<string> {
  const res = await g.inject('POST', '/v1/events', {
    token: g.tokens.admin,
    body: [
      {
        id: 'test:test/count@1.0.0',
        type: 'AssetReleasePublished',
        data: { assetId: 'test/count', version: '1.0.0', descriptor: countTool },
      },
      {
        id: 'test:agent/count-agent@1.0.0',
        type: 'AgentReleasePublished',
        data: {
          agentId: 'count-agent',
          version: '1.0.0',
          closure: [{ id: 'test/count', version: '1.0.0' }],
          policy: { maxClass: 'workspace-write' },
        },
      },
    ],
  });
  expect(res.status).toBe(200);
  const { token } = await g.gateway.directory.addPrincipal(
    {
      tenant: 'acme',
      name: 'count-agent',
      roles: ['agent'],
      project: 'web',
      agent: { id: 'count-agent', version: '1.0.0' },
    },
    'test',
  );
  return token;
}

function count(note: string): unknown {
  return { tool: { id: 'test/count', version: '1.0.0' }, input: { note }, environment: 'dev' };
}

let g: DemoGateway;
let agent: string;
beforeEach(async () => {
  executions = 0;
  g = await startDemoGateway({ nativeHandlers: registerCount });
  agent = await publishCounter(g);
});
afterEach(async () => {
  await g.close();
});

async function invocationsWithKey(key: string): Promise<InvocationRecord[]> {
  const list = await g.inject<{ invocations: InvocationRecord[] }>(
    'GET',
    '/v1/invocations?limit=500',
    { token: g.tokens.operator },
  );
  return list.body.invocations.filter((r) => r.idempotencyKey === key);
}

describe('Idempotency-Key', () => {
  it('the same key and request is the same invocation, executed once', async () => {
    const first = await g.invoke(agent, 'k-1', count('a'));
    expect(first.status).toBe(200);
    expect(first.body.status).toBe('observed');
    expect(first.body.output).toEqual({ n: 1, note: 'a' });
    const again = await g.invoke(agent, 'k-1', count('a'));
    expect(again.status).toBe(200);
    expect(again.body.id).toBe(first.body.id);
    expect(again.body.output).toEqual({ n: 1, note: 'a' });
    expect(executions).toBe(1);
    expect(await invocationsWithKey('k-1')).toHaveLength(1);
  });

  it('another key with the same request is a new invocation', async () => {
    const a = await g.invoke(agent, 'k-a', count('same'));
    const b = await g.invoke(agent, 'k-b', count('same'));
    expect(b.body.id).not.toBe(a.body.id);
    expect(b.body.requestHash).toBe(a.body.requestHash);
    expect(executions).toBe(2);
  });

  it('20 concurrent duplicates over HTTP execute once and all answer the same invocation', async () => {
    const url = await g.gateway.listen();
    const answers = await Promise.all(
      Array.from({ length: 20 }, async () => {
        const res = await fetch(`${url}/v1/invocations`, {
          method: 'POST',
          headers: {
            authorization: `Bearer ${agent}`,
            'content-type': 'application/json',
            'idempotency-key': 'k-burst',
          },
          body: JSON.stringify(count('burst')),
        });
        return { status: res.status, body: (await res.json()) as { id: string } };
      }),
    );
    const ids = new Set(answers.map((a) => a.body.id));
    expect(answers.map((a) => a.status)).toEqual(Array(20).fill(200));
    expect(ids.size).toBe(1);
    expect(executions).toBe(1);
    expect(await invocationsWithKey('k-burst')).toHaveLength(1);
  });

  it('the same key with another input is refused with 422 and changes nothing', async () => {
    const first = await g.invoke(agent, 'k-2', count('original'));
    const before = await g.inject<Checkpoint>('GET', '/v1/audit/checkpoint', {
      token: g.tokens.operator,
    });

    const reused = await g.invoke(agent, 'k-2', count('changed'));
    expect(reused.status).toBe(422);
    expect(reused.body.error?.code).toBe('IDEMPOTENCY_KEY_REUSED');
    expect(reused.body.error?.details?.previousRequestHash).toBe(first.body.requestHash);
    expect(reused.body.error?.details?.requestHash).not.toBe(first.body.requestHash);

    expect(executions).toBe(1);
    const stored = await g.inject<InvocationRecord>('GET', `/v1/invocations/${first.body.id}`, {
      token: g.tokens.operator,
    });
    expect(stored.body.input).toEqual({ note: 'original' });
    expect(stored.body.output).toEqual({ n: 1, note: 'original' });
    expect(await invocationsWithKey('k-2')).toHaveLength(1);
    const after = await g.inject<Checkpoint>('GET', '/v1/audit/checkpoint', {
      token: g.tokens.operator,
    });
    expect(after.body.treeSize).toBe(before.body.treeSize);
  });

  it('a concurrent duplicate with another input is refused while the first runs', async () => {
    const [a, b] = await Promise.all([
      g.invoke(agent, 'k-race', count('one')),
      g.invoke(agent, 'k-race', count('two')),
    ]);
    expect(a.status).toBe(200);
    expect(b.status).toBe(422);
    expect(b.body.error?.code).toBe('IDEMPOTENCY_KEY_REUSED');
    expect(executions).toBe(1);
  });

  it('a replay after a restart answers the stored invocation without running it', async () => {
    const first = await g.invoke(agent, 'k-restart', count('durable'));
    await g.stop();
    const reopened = await startDemoGateway({ dataDir: g.dataDir, nativeHandlers: registerCount });
    try {
      const again = await reopened.invoke(agent, 'k-restart', count('durable'));
      expect(again.status).toBe(200);
      expect(again.body.id).toBe(first.body.id);
      expect(executions).toBe(1);
    } finally {
      await reopened.close();
    }
  });
});
