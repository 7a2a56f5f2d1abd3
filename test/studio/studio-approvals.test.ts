import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import type { Approval } from '../../src/approvals/index.js';
import type { InvocationRecord } from '../../src/invocation/index.js';
import { ensureBuilt, runCli } from '../helpers/cli.js';
import { call } from '../helpers/gateway-fixture.js';
import { skipWithout } from '../helpers/prerequisites.js';
import {
  chromiumProblem,
  seriousViolations,
  signIn,
  useStudio,
} from '../helpers/studio-browser.js';

describe.skipIf(skipWithout('Chromium (for the Studio)', chromiumProblem()))(
  'the Studio in Chromium: approvals',
  () => {
    beforeAll(() => {
      ensureBuilt();
    });
    const studio = useStudio();

    async function approval(id: string): Promise<Approval> {
      return (
        await studio.gateway.inject<Approval>('GET', `/v1/approvals/${id}`, {
          token: studio.gateway.tokens.reviewer,
        })
      ).body;
    }

    it('builds its pages with scripts all from files (the CSP forbids inline ones)', () => {
      for (const page of ['index.html', 'signed-in.html']) {
        const html = readFileSync(join(studio.dir, page), 'utf8');
        const scripts = [...html.matchAll(/<script\b([^>]*)>([\s\S]*?)<\/script>/g)];
        expect(scripts.length, page).toBeGreaterThan(0);
        for (const [, attrs, body] of scripts) {
          expect(attrs, page).toMatch(/\bsrc="\/studio\/assets\/[^"]+\.js"/);
          expect(body?.trim(), page).toBe('');
        }
        expect(html, page).not.toMatch(/\sstyle=|\son[a-z]+=/);
      }
      // Without a session the page holds the sign-in form (no session check to make); with one,
      // the shell that preloads the session check.
      const signedOut = readFileSync(join(studio.dir, 'index.html'), 'utf8');
      expect(signedOut).toMatch(/<input id="token"/);
      expect(signedOut).not.toContain('/v1/sessions/current');
      const signedIn = readFileSync(join(studio.dir, 'signed-in.html'), 'utf8');
      expect(signedIn).not.toContain('id="token"');
      expect(signedIn).toContain('<link rel="preload" href="/v1/sessions/current"');
    });

    it('shows a gated call live; approving it with a reason lets the agent’s --wait finish observed', async () => {
      const p = await studio.page();
      await signIn(p, studio.url(), studio.gateway.tokens.reviewer);
      await expect.poll(() => p.getByText('No approvals waiting.').isVisible()).toBe(true);
      expect(await seriousViolations(p)).toEqual([]);

      const input = { title: 'Fix typo', diff: '--- a/README\n+++ b/README\n-teh\n+the\n' };
      const agent = runCli(
        [
          'invoke',
          'demo/propose-change@1.0.0',
          '--input',
          JSON.stringify(input),
          '--wait',
          '--json',
        ],
        { GATEHOUSE_URL: studio.url(), GATEHOUSE_TOKEN: studio.gateway.tokens.agent },
      );
      // The request appears without a reload, with the exact request hash it binds.
      const card = p.getByRole('article', { name: 'demo/propose-change@1.0.0' });
      await card.waitFor();
      const pending = (
        await studio.gateway.inject<{ approvals: Approval[] }>(
          'GET',
          '/v1/approvals?status=pending',
          {
            token: studio.gateway.tokens.reviewer,
          },
        )
      ).body.approvals;
      expect(pending).toHaveLength(1);
      const waiting = pending[0]!;
      expect(await card.getByTestId('request-hash').textContent()).toBe(waiting.requestHash);
      expect(await card.getByLabel('Proposed change').textContent()).toContain('+the');
      expect(await card.textContent()).toContain('0 of 1 approval');
      await p
        .getByRole('link', { name: /Approvals/ })
        .getByText('1')
        .waitFor();
      expect(await seriousViolations(p)).toEqual([]);
      await studio.screenshot(p, 'approvals');

      await card.getByLabel('Reason (required to reject)').fill('typo fix, reviewed the diff');
      await card.getByRole('button', { name: 'Approve' }).click();
      await p.getByText('No approvals waiting.').waitFor();

      const run = await agent;
      expect(run.stderr).toContain('pending, 0 of 1 approvals');
      expect(run.stderr).toContain('approved: typo fix, reviewed the diff');
      expect(run.code, run.stderr).toBe(0);
      const done = JSON.parse(run.stdout) as InvocationRecord;
      expect(done.status).toBe('observed');
      expect(done.approvalId).toBe(waiting.id);
      const decided = await approval(waiting.id);
      expect(decided.decisions).toMatchObject([
        { decision: 'approve', reason: 'typo fix, reviewed the diff' },
      ]);
      // Decided approvals stay visible, as what they became.
      await p
        .getByRole('article', { name: 'demo/propose-change@1.0.0' })
        .getByText('consumed')
        .waitFor();
    });

    it('rejects with a reason (and asks for one first); a decision on one Studio leaves every inbox', async () => {
      const [a, b] = [await studio.page(), await studio.page()];
      await signIn(a, studio.url(), studio.gateway.tokens.reviewer);
      await signIn(b, studio.url(), studio.gateway.tokens.reviewer);
      const res = await studio.gateway.invoke(
        studio.gateway.tokens.agent,
        'studio-reject-1',
        call('demo/propose-change', { title: 'Drop table', diff: '-users\n' }),
      );
      expect(res.body.status).toBe('awaiting_approval');
      const id = res.body.approvalId!;
      const cardA = a.getByRole('list', { name: 'Pending approvals' }).getByRole('article');
      const cardB = b.getByRole('list', { name: 'Pending approvals' }).getByRole('article');
      await cardA.waitFor();
      await cardB.waitFor();

      await cardA.getByRole('button', { name: 'Reject' }).click();
      await cardA.getByRole('alert').getByText('Say why you reject it').waitFor();
      expect((await approval(id)).status).toBe('pending');

      await cardA.getByLabel('Reason (required to reject)').fill('never drop users');
      await cardA.getByRole('button', { name: 'Reject' }).click();
      await a.getByText('No approvals waiting.').waitFor();
      await b.getByText('No approvals waiting.').waitFor();
      const rejected = await approval(id);
      expect(rejected.status).toBe('rejected');
      expect(rejected.decisions[0]?.reason).toBe('never drop users');
    });

    it('shows an approval requested before its event stream opened (it reads afresh on open)', async () => {
      const p = await studio.page();
      // Hold the page's event stream back until the approval exists: its first list is read
      // before, and the event of the request is sent before the stream is there to carry it.
      let release: () => void = () => undefined;
      const held = new Promise<void>((resolve) => (release = resolve));
      await p.route('**/v1/events/stream', async (route) => {
        await held;
        await route.continue();
      });
      await signIn(p, studio.url(), studio.gateway.tokens.reviewer);
      await p.getByText('No approvals waiting.').waitFor();
      const res = await studio.gateway.invoke(
        studio.gateway.tokens.agent,
        'studio-late-stream-1',
        call('demo/propose-change', { title: 'Late stream', diff: '+late\n' }),
      );
      expect(res.body.status).toBe('awaiting_approval');
      release();
      await p
        .getByRole('list', { name: 'Pending approvals' })
        .getByRole('article', { name: 'demo/propose-change@1.0.0' })
        .waitFor();
      await studio.gateway.inject('POST', `/v1/approvals/${res.body.approvalId!}/reject`, {
        token: studio.gateway.tokens.reviewer,
        body: { reason: 'clean up after the test' },
      });
      await p.getByText('No approvals waiting.').waitFor();
    });

    it('never shows a request as made in the future when the browser clock is behind the gateway', async () => {
      const p = await studio.page();
      // The browser's clock 20 s behind the gateway's, which stamps the request.
      await p.clock.install({ time: Date.now() - 20_000 });
      await signIn(p, studio.url(), studio.gateway.tokens.reviewer);
      const res = await studio.gateway.invoke(
        studio.gateway.tokens.agent,
        'studio-skew-1',
        call('demo/propose-change', { title: 'Skewed clock', diff: '+skew\n' }),
      );
      expect(res.body.status).toBe('awaiting_approval');
      const card = p
        .getByRole('list', { name: 'Pending approvals' })
        .getByRole('article', { name: 'demo/propose-change@1.0.0' });
      await card.waitFor();
      const { requestedAt } = await approval(res.body.approvalId!);
      const requested = card.locator(`time[datetime="${requestedAt}"]`).first();
      await expect(requested.textContent()).resolves.toMatch(/just now|ago/);
      await studio.gateway.inject('POST', `/v1/approvals/${res.body.approvalId!}/reject`, {
        token: studio.gateway.tokens.reviewer,
        body: { reason: 'clean up after the test' },
      });
    });

    it('keeps agents out, and sets the session cookie HttpOnly and SameSite=Strict', async () => {
      const p = await studio.page();
      // The sign-in form comes in the page itself: it takes typing while the script is held back,
      // its button stays disabled until the script has run and taken over what was typed.
      let release = (): void => undefined;
      const held = new Promise<void>((resolve) => (release = resolve));
      const script = '**/studio/assets/index-*.js';
      let passed: Promise<void> | undefined;
      await p.route(script, (route) => (passed = held.then(() => route.continue())));
      await p.goto(`${studio.url()}/studio/`, { waitUntil: 'commit' });
      await p.getByLabel('Token').fill(studio.gateway.tokens.agent);
      expect(await p.getByRole('button', { name: 'Sign in' }).isDisabled()).toBe(true);
      release();
      await passed;
      await p.unroute(script);
      await p.getByRole('button', { name: 'Sign in' }).click();
      await p.getByRole('alert').getByText('Agents cannot sign in').waitFor();
      expect(await p.context().cookies()).toEqual([]);

      await signIn(p, studio.url(), studio.gateway.tokens.operator);
      const [cookie, ...others] = await p.context().cookies();
      expect(others).toEqual([]);
      expect(cookie).toMatchObject({
        name: 'gatehouse_session',
        httpOnly: true,
        sameSite: 'Strict',
        secure: false, // plain http on loopback; over TLS the cookie is Secure
        path: '/',
      });
      expect(cookie!.expires).toBeGreaterThan(Date.now() / 1000);
      // Reloaded with the session, the page is the shell: the views, never the sign-in form.
      const reloaded = await p.reload();
      expect(await reloaded?.text()).not.toContain('id="token"');
      await p.getByRole('button', { name: 'Sign out' }).waitFor();
      // The page cannot read it.
      expect(
        await p.evaluate(
          () => (globalThis as unknown as { document: { cookie: string } }).document.cookie,
        ),
      ).toBe('');
      // Signing out revokes the session: the old cookie no longer works.
      const stolen = `gatehouse_session=${cookie!.value}`;
      await p.getByRole('button', { name: 'Sign out' }).click();
      await p.getByLabel('Token').waitFor();
      const after = await studio.gateway.inject('GET', '/v1/invocations', {
        headers: { cookie: stolen },
      });
      expect(after.status).toBe(401);
    });

    it('refuses a cross-site form POST that tries to approve with the reviewer’s session', async () => {
      const p = await studio.page();
      await signIn(p, studio.url(), studio.gateway.tokens.reviewer);
      const res = await studio.gateway.invoke(
        studio.gateway.tokens.agent,
        'studio-csrf-1',
        call('demo/propose-change', { title: 'Sneaky', diff: '+backdoor\n' }),
      );
      const id = res.body.approvalId!;
      // A page of another site (served here by the browser itself) posts a form to the gateway.
      await p.route('http://attacker.test/**', (route) =>
        route.fulfill({
          contentType: 'text/html',
          body: `<form id="f" method="POST" enctype="text/plain" action="${studio.url()}/v1/approvals/${id}/approve"><input name="reason" value="x"></form><script>document.getElementById('f').submit()</script>`,
        }),
      );
      const answer = p.waitForResponse((r) => r.url().endsWith(`/v1/approvals/${id}/approve`));
      await p.goto('http://attacker.test/');
      const refused = await answer;
      // text/plain is a body the gateway parses, so the request reaches authentication: the
      // SameSite=Strict cookie was not sent, and without it (or a CSRF token) nothing is decided.
      expect(refused.status()).toBe(401);
      expect((await approval(id)).status).toBe('pending');
    });
  },
);
