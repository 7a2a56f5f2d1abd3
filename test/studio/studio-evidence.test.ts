import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { InvocationRecord } from '../../src/invocation/index.js';
import { call, startDemoGateway } from '../helpers/gateway-fixture.js';
import type { DemoGateway } from '../helpers/gateway-fixture.js';
import { skipWithout } from '../helpers/prerequisites.js';
import { buildStudio, chromiumProblem, launchChromium, signIn } from '../helpers/studio-browser.js';

const AXE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

let g: DemoGateway;
let browser: Browser;
let studio: { dir: string; remove: () => void };
const contexts: BrowserContext[] = [];

async function page(): Promise<Page> {
  const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
  contexts.push(context);
  return context.newPage();
}

function url(): string {
  if (!g.url) throw new Error('the gateway is not listening');
  return g.url;
}

async function seriousViolations(p: Page): Promise<string[]> {
  await p.evaluate(AXE);
  const found = await p.evaluate(async () => {
    type Finding = { id: string; impact: string | null; help: string };
    const { axe } = globalThis as unknown as {
      axe: { run: () => Promise<{ violations: Finding[] }> };
    };
    return (await axe.run()).violations;
  });
  return found
    .filter((v) => v.impact === 'serious' || v.impact === 'critical')
    .map((v) => `${v.id}: ${v.help}`);
}

describe.skipIf(skipWithout('Chromium (for the Studio)', chromiumProblem()))(
  'the Studio in Chromium: evidence and Uncertain effects',
  () => {
    beforeAll(async () => {
      studio = buildStudio();
      g = await startDemoGateway({ listen: true, config: { studioDir: studio.dir } });
      browser = await launchChromium();
    });
    afterAll(async () => {
      for (const c of contexts) await c.close();
      await browser?.close();
      await g?.close();
      studio?.remove();
    });

    it('verifies a receipt in the browser, and shows one whose signature was altered as not verified', async () => {
      const res = await g.invoke(
        g.tokens.agent,
        'studio-receipt-1',
        call('demo/echo', { message: 'hi' }),
      );
      expect(res.body.status).toBe('observed');
      const id = res.body.id;
      const p = await page();
      await signIn(p, url(), g.tokens.operator);
      await p.goto(`${url()}/studio/invocations/${id}`);
      const verdict = p.getByTestId('receipt-verdict');
      await verdict.getByText('Receipt verified in this browser.').waitFor();
      for (const check of [
        'Signature',
        'Request hash',
        'Audit record',
        'Checkpoint',
        'Inclusion proof',
      ]) {
        expect(await p.locator('.checks li.ok', { hasText: check }).count(), check).toBe(1);
      }
      await p.getByRole('list', { name: 'Stage timeline' }).getByText('execute').waitFor();
      expect(await seriousViolations(p)).toEqual([]);

      // A test double of the receipt route serves the receipt with one signature byte changed.
      await p.route(`**/v1/invocations/${id}/receipt`, async (route) => {
        const real = await route.fetch();
        const env = (await real.json()) as { signatures: { sig: string }[] };
        const sig = Buffer.from(env.signatures[0]!.sig, 'base64');
        sig[0] = sig[0]! ^ 1;
        env.signatures[0]!.sig = sig.toString('base64');
        await route.fulfill({ response: real, json: env });
      });
      await p.getByRole('button', { name: 'Verify again' }).click();
      await verdict.getByText('Receipt NOT verified.').waitFor();
      expect(await p.locator('.checks li.fail').textContent()).toMatch(
        /Signature.*does not verify/,
      );
    });

    it('lets an operator deny an Uncertain effect with evidence, and the inbox empties', async () => {
      const body = call(
        'demo/flaky-deploy',
        { service: 'web', version: '9.9.9', dropConnection: true },
        'prod',
      );
      const waiting = await g.invoke(g.tokens.agent, 'studio-uncertain-1', body);
      expect(waiting.body.status).toBe('awaiting_approval');
      const approvalId = waiting.body.approvalId!;
      const ok = await g.inject('POST', `/v1/approvals/${approvalId}/approve`, {
        token: g.tokens.reviewer,
        body: { reason: 'ship it' },
      });
      expect(ok.status).toBe(200);
      const p = await page();
      await signIn(p, url(), g.tokens.operator);
      await p.goto(`${url()}/studio/uncertain`);
      await p.getByText('No uncertain effects to resolve.').waitFor();
      // It becomes Uncertain while the page is open, and appears without a reload.
      const resumed = await g.invoke(g.tokens.agent, 'studio-uncertain-1', {
        ...(body as object),
        approvalId,
      });
      expect(resumed.body.status).toBe('uncertain');
      const card = p.getByRole('article', { name: 'demo/flaky-deploy@1.0.0' });
      await card.waitFor();
      expect(await seriousViolations(p)).toEqual([]);
      await card.getByRole('button', { name: 'Deny: it did not happen' }).click();
      await card.getByRole('alert').getByText('Write the evidence').waitFor();
      await card.getByLabel('Evidence').fill('deploy log shows no 9.9.9 rollout');
      await card.getByRole('button', { name: 'Deny: it did not happen' }).click();
      await p.getByText('No uncertain effects to resolve.').waitFor();
      const record = (
        await g.inject<InvocationRecord>('GET', `/v1/invocations/${resumed.body.id}`, {
          token: g.tokens.operator,
        })
      ).body;
      expect(record.resolution).toMatchObject({
        effect: 'denied',
        evidence: 'deploy log shows no 9.9.9 rollout',
      });
    });
  },
);
