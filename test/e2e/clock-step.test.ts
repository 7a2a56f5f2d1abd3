import { afterEach, describe, expect, it } from 'vitest';
import type { Clock } from '../../src/core/index.js';
import type { InvocationRecord } from '../../src/invocation/index.js';
import { call, startDemoGateway } from '../helpers/gateway-fixture.js';
import type { DemoGateway } from '../helpers/gateway-fixture.js';

const HOUR = 3600 * 1000;

/** A clock the test steps back, as an NTP correction or an operator would. */
class SteppedClock implements Clock {
  constructor(private ms = Date.now()) {}
  now(): number {
    return this.ms;
  }
  stepBack(ms: number): void {
    this.ms -= ms;
  }
}

let g: DemoGateway | undefined;
afterEach(async () => {
  await g?.close();
  g = undefined;
});

async function echo(d: DemoGateway, key: string): Promise<string> {
  const res = await d.invoke(d.tokens.agent, key, call('demo/echo', { message: key }));
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body.id;
}

async function listed(d: DemoGateway): Promise<string[]> {
  const res = await d.inject<{ invocations: InvocationRecord[] }>(
    'GET',
    '/v1/invocations?limit=10',
    { token: d.tokens.operator },
  );
  return res.body.invocations.map((r) => r.id);
}

describe('after the clock steps back', () => {
  it('lists new invocations above old ones, in one run and across a restart', async () => {
    const clock = new SteppedClock();
    g = await startDemoGateway({ clock });
    const first = await echo(g, 'before-step');
    clock.stepBack(HOUR);
    const second = await echo(g, 'after-step');
    expect(await listed(g)).toEqual([second, first]);

    const dataDir = g.dataDir;
    await g.stop();
    clock.stepBack(HOUR);
    const reopened = await startDemoGateway({ clock, dataDir });
    try {
      const third = await echo(reopened, 'after-restart');
      expect(await listed(reopened)).toEqual([third, second, first]);
    } finally {
      await reopened.close();
    }
  }, 120_000);
});
