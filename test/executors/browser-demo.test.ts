import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDemoGateway } from '../helpers/gateway-fixture.js';
import type { DemoGateway } from '../helpers/gateway-fixture.js';
import { skipWithout } from '../helpers/prerequisites.js';
import { processesMatching } from '../helpers/sandbox-tools.js';
import { missingChromium } from './browser-fixture.js';

const unavailable = skipWithout('Chromium (Debian package chromium)', missingChromium());

describe.skipIf(unavailable)('the demo browser tool', () => {
  let g: DemoGateway;
  beforeAll(async () => {
    g = await startDemoGateway();
  }, 60_000);
  afterAll(() => g?.close());

  it('demo/browse reads the demo ticket board and screenshots it at its declared viewport', async () => {
    const board = g.gateway.config.sandbox.egressAllow.find((a) => a.startsWith('127.0.0.1:'));
    expect(board, 'the ticket service is in the egress allow-list').toBeDefined();
    const res = await g.invoke(g.tokens.agent, 'demo-browse-1', {
      tool: { id: 'demo/browse', version: '1.0.0' },
      environment: 'dev',
      input: {
        steps: [
          { action: 'goto', url: `http://${board!}/` },
          { action: 'extract', selector: 'h1' },
          { action: 'screenshot' },
        ],
      },
    });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.status, JSON.stringify(res.body.error)).toBe('observed');
    const out = res.body.output as { title: string; steps: Record<string, unknown>[] };
    expect(out.title).toBe('Ticket board');
    expect(out.steps[1]).toMatchObject({ values: ['Ticket board'] });
    expect(out.steps[2]).toMatchObject({ mediaType: 'image/png', width: 1280, height: 800 });
    expect(processesMatching('/usr/lib/chromium/chromium')).toEqual([]);
  }, 90_000);

  it('demo/browse refuses a step outside its allowed actions', async () => {
    const res = await g.invoke(g.tokens.agent, 'demo-browse-2', {
      tool: { id: 'demo/browse', version: '1.0.0' },
      environment: 'dev',
      input: { steps: [{ action: 'click', selector: 'a' }] },
    });
    expect(res.status).toBe(422);
    expect(JSON.stringify(res.body.error)).toContain('/steps/0/action');
  });
});
