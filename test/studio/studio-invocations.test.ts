import type { Page } from 'playwright-core';
import { beforeAll, describe, expect, it } from 'vitest';
import type { InvocationRecord } from '../../src/invocation/index.js';
import { call } from '../helpers/gateway-fixture.js';
import { skipWithout } from '../helpers/prerequisites.js';
import {
  chromiumProblem,
  seriousViolations,
  signIn,
  useStudio,
} from '../helpers/studio-browser.js';

/** The ids of the invocations the list shows, sorted. */
async function shown(p: Page): Promise<string[]> {
  const links = await p.locator('table tbody a').all();
  const hrefs = await Promise.all(links.map(async (a) => (await a.getAttribute('href')) ?? ''));
  return hrefs.map((h) => decodeURIComponent(h.replace('/studio/invocations/', ''))).sort();
}

/** The ids of the invocations the list shows, in its order. */
async function inOrder(p: Page): Promise<string[]> {
  const hrefs = await p
    .locator('table tbody a')
    .evaluateAll((as) => as.map((a) => a.getAttribute('href') ?? ''));
  return hrefs.map((h) => decodeURIComponent(h.replace('/studio/invocations/', '')));
}

const ids = (rs: InvocationRecord[]) => rs.map((r) => r.id).sort();

describe.skipIf(skipWithout('Chromium (for the Studio)', chromiumProblem()))(
  "the Studio in Chromium: the invocation list filtered by the gateway, and the gateway's clock",
  () => {
    const studio = useStudio();
    let calls: InvocationRecord[];

    beforeAll(async () => {
      const g = studio.gateway;
      const release = await g.inject('POST', '/v1/events', {
        token: g.tokens.admin,
        body: [
          {
            id: 'test:agent/ops-agent@1.0.0',
            type: 'AgentReleasePublished',
            data: {
              agentId: 'ops-agent',
              version: '1.0.0',
              closure: [{ id: 'demo/echo', version: '1.0.0' }],
              policy: { maxClass: 'read' },
            },
          },
        ],
      });
      expect(release.status, JSON.stringify(release.body)).toBe(200);
      const ops = await g.gateway.directory.addPrincipal(
        {
          tenant: 'acme',
          name: 'ops-agent',
          roles: ['agent'],
          project: 'web',
          agent: { id: 'ops-agent', version: '1.0.0' },
        },
        'test',
      );
      calls = [];
      for (const [token, key, body] of [
        [g.tokens.agent, 'list-1', call('demo/echo', { message: 'one' })],
        [g.tokens.agent, 'list-2', call('demo/echo', { message: 'two' }, 'prod')],
        [g.tokens.agent, 'list-3', call('demo/propose-change', { title: 't', diff: '-a\n+b' })],
        [ops.token, 'list-4', call('demo/echo', { message: 'four' })],
      ] as const) {
        const res = await g.invoke(token, key, body);
        expect(res.body.id, JSON.stringify(res.body)).toBeDefined();
        calls.push(res.body);
      }
    });

    it('shows only the rows that match each filter, with the filters in the URL', async () => {
      const [one, prod, gated, ops] = calls as [
        InvocationRecord,
        InvocationRecord,
        InvocationRecord,
        InvocationRecord,
      ];
      expect(gated.status).toBe('awaiting_approval');
      expect(ops.agent.id).toBe('ops-agent');
      expect(prod.environment).toBe('prod');
      const base = studio.url();
      const p = await studio.page();
      await signIn(p, base, studio.gateway.tokens.operator);
      await p.goto(`${base}/studio/invocations`);
      await expect.poll(() => shown(p)).toEqual(ids(calls));

      // The status applies as it is chosen.
      const form = p.getByRole('form', { name: 'Filter invocations' });
      await form.getByLabel('Status').selectOption('awaiting_approval');
      await expect.poll(() => shown(p)).toEqual([gated.id]);
      expect(new URL(p.url()).searchParams.get('status')).toBe('awaiting_approval');
      expect(await seriousViolations(p)).toEqual([]);

      // Text filters apply with Enter, together with the status still chosen.
      await form.getByLabel('Status').selectOption('');
      await expect.poll(() => shown(p)).toEqual(ids(calls));
      await form.getByLabel('Agent').fill('ops-agent');
      await form.getByLabel('Agent').press('Enter');
      await expect.poll(() => shown(p)).toEqual([ops.id]);
      expect(new URL(p.url()).searchParams.get('agent')).toBe('ops-agent');

      await form.getByRole('button', { name: 'Clear' }).click();
      await expect.poll(() => shown(p)).toEqual(ids(calls));
      await form.getByLabel('Tool', { exact: true }).fill('demo/echo');
      await form.getByLabel('Tool version').fill('1.0.0');
      await form.getByRole('button', { name: 'Apply' }).click();
      await expect.poll(() => shown(p)).toEqual(ids([one, prod, ops]));
      const echo = new URL(p.url()).searchParams;
      expect([echo.get('tool'), echo.get('toolVersion')]).toEqual(['demo/echo', '1.0.0']);

      // A shared or reloaded URL shows the same filtered list, and its filters in the form.
      await p.goto(`${base}/studio/invocations?environment=prod&tool=demo%2Fecho`);
      await expect.poll(() => shown(p)).toEqual([prod.id]);
      expect(await form.getByLabel('Environment').inputValue()).toBe('prod');
      expect(await form.getByLabel('Tool', { exact: true }).inputValue()).toBe('demo/echo');

      // A time range: from the creation of the ops agent's call on.
      await p.goto(`${base}/studio/invocations?from=${encodeURIComponent(ops.createdAt)}`);
      const later = calls.filter((c) => c.createdAt >= ops.createdAt);
      await expect.poll(() => shown(p)).toEqual(ids(later));
      await p.goto(
        `${base}/studio/invocations?from=${encodeURIComponent(one.createdAt)}&to=${encodeURIComponent(gated.createdAt)}`,
      );
      const between = calls.filter(
        (c) => c.createdAt >= one.createdAt && c.createdAt < gated.createdAt,
      );
      expect(between.map((c) => c.id)).toContain(one.id);
      await expect.poll(() => shown(p)).toEqual(ids(between));
      // A range that ends before it starts is refused, its rows not shown.
      await form.getByLabel('From').fill('2099-01-01T00:00');
      await p
        .getByRole('alert')
        .getByText(/Query parameter to is before from/)
        .waitFor();
      expect(await shown(p)).toEqual([]);
      // The From input (local time) sets the range in the URL; nothing was made in 2099.
      await form.getByRole('button', { name: 'Clear' }).click();
      await expect.poll(() => shown(p)).toEqual(ids(calls));
      await form.getByLabel('From').fill('2099-01-01T00:00');
      await p.getByText('No invocations match these filters.').waitFor();
      expect(await shown(p)).toEqual([]);
      expect(Date.parse(new URL(p.url()).searchParams.get('from')!)).toBe(
        await p.evaluate(() => new Date('2099-01-01T00:00').getTime()),
      );

      // A malformed filter in a URL is the gateway's 400, shown as it said it.
      await p.goto(`${base}/studio/invocations?from=yesterday`);
      await p
        .getByRole('alert')
        .getByText(/Query parameter from must be an ISO 8601 instant/)
        .waitFor();
    });

    it("shows ages and expiries by the gateway's clock when the browser's is 10 minutes ahead", async () => {
      const g = studio.gateway;
      const gated = await g.invoke(
        g.tokens.agent,
        'clock-1',
        call('demo/propose-change', { title: 'clock', diff: '-a\n+b' }),
      );
      expect(gated.body.status).toBe('awaiting_approval');
      const approval = (
        await g.inject<{ expiresAt: string }>('GET', `/v1/approvals/${gated.body.approvalId!}`, {
          token: g.tokens.reviewer,
        })
      ).body;
      const p = await studio.page();
      await p.clock.setSystemTime(Date.now() + 10 * 60_000);
      await signIn(p, studio.url(), g.tokens.reviewer);
      const card = p.locator(`article[aria-labelledby="approval-${gated.body.approvalId!}"]`);
      const field = (name: string) => card.locator(`dt:text-is("${name}") + dd`);
      await field('Expires').waitFor();
      // The browser's own clock would say "10 min ago" and an expiry 10 minutes early.
      expect(await field('Requested by').textContent()).toMatch(/(just now|\d+ s ago)$/);
      const left = Date.parse(approval.expiresAt) - Date.now();
      const texts = [-1, 0, 1].map((d) =>
        left < 3_600_000
          ? `in ${Math.round(left / 60_000) + d} min`
          : `in ${Math.round(left / 3_600_000) + d} h`,
      );
      expect(texts).toContain(await field('Expires').textContent());
    });

    it('pages 100 rows at a time: Older invocations opens the rest, keeping the filters', async () => {
      const g = studio.gateway;
      // More than one page of calls, made in process before the page loads.
      for (let i = 0; i < 101; i++) {
        const res = await g.invoke(
          g.tokens.agent,
          `page-${i}`,
          call('demo/echo', { message: `${i}` }),
        );
        expect(res.status, JSON.stringify(res.body)).toBe(200);
      }
      const all = await g.inject<{ invocations: InvocationRecord[] }>(
        'GET',
        '/v1/invocations?environment=dev&limit=500',
        { token: g.tokens.operator },
      );
      const newestFirst = all.body.invocations.map((r) => r.id);
      expect(newestFirst.length).toBeGreaterThan(100);
      expect(newestFirst.length).toBeLessThan(200);

      const p = await studio.page();
      await signIn(p, studio.url(), g.tokens.operator);
      await p.goto(`${studio.url()}/studio/invocations?environment=dev`);
      await expect.poll(() => inOrder(p)).toEqual(newestFirst.slice(0, 100));
      const pager = p.getByRole('navigation', { name: 'Pages of invocations' });
      expect(await pager.getByRole('link', { name: 'Newest' }).count()).toBe(0);
      await pager.getByRole('link', { name: 'Older invocations' }).click();
      await expect.poll(() => inOrder(p)).toEqual(newestFirst.slice(100));
      const url = new URL(p.url());
      expect(url.searchParams.get('environment')).toBe('dev');
      expect(url.searchParams.get('cursor')).toBe(newestFirst[99]);
      expect(await p.locator('table caption').textContent()).toContain('(an older page)');
      expect(await pager.getByRole('link', { name: 'Older invocations' }).count()).toBe(0);
      expect(await seriousViolations(p)).toEqual([]);

      await pager.getByRole('link', { name: 'Newest' }).click();
      await expect.poll(() => inOrder(p)).toEqual(newestFirst.slice(0, 100));
      expect(new URL(p.url()).searchParams.get('cursor')).toBeNull();
    });
  },
);
