import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { InvocationRecord } from '../../src/invocation/index.js';
import { startDemoGateway } from '../helpers/gateway-fixture.js';
import type { DemoGateway } from '../helpers/gateway-fixture.js';
import { skipWithout } from '../helpers/prerequisites.js';
import { missingChromium, sandboxedChromium } from './browser-fixture.js';

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
    expect(sandboxedChromium()).toEqual([]);
  }, 90_000);

  it('demo/web-form signs in with the brokered password and submits the new-ticket form once a reviewer approves', async () => {
    const board = g.gateway.config.sandbox.egressAllow.find((a) => a.startsWith('127.0.0.1:'))!;
    const { password } = JSON.parse(readFileSync(`${g.dataDir}/demo-tickets.json`, 'utf8')) as {
      password: string;
    };
    const body = {
      tool: { id: 'demo/web-form', version: '1.0.0' },
      environment: 'dev',
      input: {
        steps: [
          { action: 'goto', url: `http://${board}/login` },
          { action: 'fill', selector: '#password', secret: 'tickets-password' },
          { action: 'click', selector: '#submit' },
          { action: 'waitFor', selector: '#new-ticket' },
          { action: 'goto', url: `http://${board}/tickets/new` },
          { action: 'fill', selector: '#ticket-title', value: 'Coffee machine leaks' },
          { action: 'fill', selector: '#ticket-body', value: 'second floor' },
          { action: 'click', selector: '#create' },
          { action: 'waitFor', selector: '#title' },
          { action: 'extract', selector: '#title' },
        ],
      },
    };
    const first = await g.invoke(g.tokens.agent, 'demo-web-form-1', body);
    expect(first.status, JSON.stringify(first.body)).toBe(202);
    const waiting = first.body as InvocationRecord & { approvalId: string };
    expect(waiting.status).toBe('awaiting_approval');
    expect(await boardHtml(board)).not.toContain('Coffee machine leaks');
    const approved = await g.inject('POST', `/v1/approvals/${waiting.approvalId}/approve`, {
      token: g.tokens.reviewer,
      body: {},
    });
    expect(approved.status, JSON.stringify(approved.body)).toBe(200);
    const done = await g.invoke(g.tokens.agent, 'demo-web-form-1', {
      ...body,
      approvalId: waiting.approvalId,
    });
    expect(done.body.status, JSON.stringify(done.body.error)).toBe('observed');
    const out = done.body.output as { url: string; steps: Record<string, unknown>[] };
    expect(out.steps[9]).toMatchObject({ values: ['Coffee machine leaks'] });
    expect(out.url).toMatch(new RegExp(`^http://${board}/tickets/T-[0-9]+$`));
    expect(await boardHtml(board)).toContain('Coffee machine leaks');
    expect(JSON.stringify(done.body)).not.toContain(password);
    const receipt = await g.inject('GET', `/v1/invocations/${done.body.id}/receipt`, {
      token: g.tokens.agent,
    });
    expect(receipt.status).toBe(200);
    expect(JSON.stringify(receipt.body)).not.toContain(password);
  }, 120_000);

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

/** The demo ticket board's HTML, fetched directly. */
async function boardHtml(board: string): Promise<string> {
  return (await fetch(`http://${board}/`)).text();
}
