import { describe, expect, it } from 'vitest';
import type { InvocationRecord } from '../../src/invocation/index.js';
import { call } from '../helpers/gateway-fixture.js';
import { skipWithout } from '../helpers/prerequisites.js';
import {
  chromiumProblem,
  seriousViolations,
  signIn,
  useStudio,
} from '../helpers/studio-browser.js';

describe.skipIf(skipWithout('Chromium (for the Studio)', chromiumProblem()))(
  'the Studio in Chromium: evidence and Uncertain effects',
  () => {
    const studio = useStudio();

    it('verifies a receipt in the browser, and shows one whose signature was altered as not verified', async () => {
      const res = await studio.gateway.invoke(
        studio.gateway.tokens.agent,
        'studio-receipt-1',
        call('demo/echo', { message: 'hi' }),
      );
      expect(res.body.status).toBe('observed');
      const id = res.body.id;
      const p = await studio.page();
      await signIn(p, studio.url(), studio.gateway.tokens.operator);
      await p.goto(`${studio.url()}/studio/invocations/${id}`);
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
      await studio.screenshot(p, 'invocation');

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
      const waiting = await studio.gateway.invoke(
        studio.gateway.tokens.agent,
        'studio-uncertain-1',
        body,
      );
      expect(waiting.body.status).toBe('awaiting_approval');
      const approvalId = waiting.body.approvalId!;
      const ok = await studio.gateway.inject('POST', `/v1/approvals/${approvalId}/approve`, {
        token: studio.gateway.tokens.reviewer,
        body: { reason: 'ship it' },
      });
      expect(ok.status).toBe(200);
      const p = await studio.page();
      await signIn(p, studio.url(), studio.gateway.tokens.operator);
      await p.goto(`${studio.url()}/studio/uncertain`);
      await p.getByText('No uncertain effects to resolve.').waitFor();
      // It becomes Uncertain while the page is open, and appears without a reload.
      const resumed = await studio.gateway.invoke(
        studio.gateway.tokens.agent,
        'studio-uncertain-1',
        {
          ...(body as object),
          approvalId,
        },
      );
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
        await studio.gateway.inject<InvocationRecord>('GET', `/v1/invocations/${resumed.body.id}`, {
          token: studio.gateway.tokens.operator,
        })
      ).body;
      expect(record.resolution).toMatchObject({
        effect: 'denied',
        evidence: 'deploy log shows no 9.9.9 rollout',
      });
    });
  },
);
