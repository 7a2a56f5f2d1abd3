import { setTimeout as sleep } from 'node:timers/promises';
import { afterEach, describe, expect, it } from 'vitest';
import { call, startDemoGateway } from '../helpers/gateway-fixture.js';
import type { DemoGateway } from '../helpers/gateway-fixture.js';
import { requireInTest } from '../helpers/prerequisites.js';
import { SseClient } from '../helpers/sse.js';

let g: DemoGateway | undefined;
afterEach(async () => {
  await g?.close();
  g = undefined;
});

/** The value of one sample of /metrics (`name{labels}`), or undefined when it is not there. */
async function sample(gw: DemoGateway, series: string): Promise<number | undefined> {
  const res = await gw.inject<string>('GET', '/metrics');
  const line = res.body.split('\n').find((l) => l.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}

/** Scrapes until `series` reads `value` (the gauges follow the gateway's state as it changes). */
async function until(gw: DemoGateway, series: string, value: number): Promise<void> {
  let last: number | undefined;
  for (let i = 0; i < 250; i++) {
    last = await sample(gw, series);
    if (last === value) return;
    await sleep(20);
  }
  expect(last, series).toBe(value);
}

describe('/metrics of the gateway’s state', { timeout: 120_000 }, () => {
  it('labels outcomes with published tools only: an unknown id or version is one series', async () => {
    g = await startDemoGateway();
    const invoke = (tool: { id: string; version: string }, key: string) =>
      g!.inject('POST', '/v1/invocations', {
        token: g!.tokens.agent,
        headers: { 'idempotency-key': key },
        body: { tool, input: { message: 'x' }, environment: 'dev' },
      });
    expect((await invoke({ id: 'demo/echo', version: '1.0.0' }, 'm-1')).status).toBe(200);
    for (let i = 0; i < 5; i++)
      expect(
        (await invoke({ id: `made-up/${i}-${'x'.repeat(200)}`, version: '1.0.0' }, `m-u${i}`))
          .status,
      ).toBe(422);
    expect((await invoke({ id: 'demo/echo', version: '../../etc' }, 'm-v')).status).toBe(422);
    const text = (await g.inject<string>('GET', '/metrics')).body;
    expect(
      await sample(g, 'gatehouse_invocations_total{tool="demo/echo@1.0.0",status="observed"}'),
    ).toBe(1);
    expect(await sample(g, 'gatehouse_invocations_total{tool="(unknown)",status="denied"}')).toBe(
      6,
    );
    expect(text).not.toContain('made-up/');
    expect(text).not.toContain('../../etc');
  });

  it('counts the clients of the event stream as they come and go', async () => {
    g = await startDemoGateway({ listen: true });
    await until(g, 'gatehouse_event_stream_clients', 0);
    const a = await SseClient.connect(g.url!, g.tokens.operator);
    const b = await SseClient.connect(g.url!, g.tokens.agent);
    await until(g, 'gatehouse_event_stream_clients', 2);
    a.close();
    await until(g, 'gatehouse_event_stream_clients', 1);
    b.close();
    await until(g, 'gatehouse_event_stream_clients', 0);
  });

  it('shows the leases in use and the queue for capacity, per pool', async (ctx) => {
    g = await startDemoGateway({ sandbox: { pool: { leases: 1 }, queueBudgetMs: 20_000 } });
    requireInTest(ctx, 'the Linux sandbox', g.gateway.execution.sandboxProblem);
    const gw = g;
    await until(gw, 'gatehouse_leases_in_use{pool="default"}', 0);
    await until(gw, 'gatehouse_queue_depth{pool="default"}', 0);
    const first = gw.invoke(gw.tokens.agent, 'm-first', call('demo/sh', { script: 'sleep 2' }));
    await until(gw, 'gatehouse_leases_in_use{pool="default"}', 1);
    const second = gw.invoke(gw.tokens.agent, 'm-second', call('demo/sh', { script: 'true' }));
    await until(gw, 'gatehouse_queue_depth{pool="default"}', 1);
    const done = await Promise.all([first, second]);
    expect(done.map((r) => r.body.status)).toEqual(['observed', 'observed']);
    await until(gw, 'gatehouse_queue_depth{pool="default"}', 0);
    await until(gw, 'gatehouse_leases_in_use{pool="default"}', 0);
  });
});
