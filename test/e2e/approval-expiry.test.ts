import { setTimeout as sleep } from 'node:timers/promises';
import { afterEach, describe, expect, it } from 'vitest';
import type { InvocationRecord } from '../../src/invocation/index.js';
import { call, startDemoGateway } from '../helpers/gateway-fixture.js';
import type { DemoGateway } from '../helpers/gateway-fixture.js';
import { verifiedReceipt } from '../helpers/sandbox-tools.js';

let g: DemoGateway | undefined;
afterEach(async () => {
  await g?.close();
  g = undefined;
});

/** The invocation as stored (reading it never looks at its approval). */
async function stored(d: DemoGateway, id: string): Promise<InvocationRecord> {
  const r = await d.inject<InvocationRecord>('GET', `/v1/invocations/${id}`, {
    token: d.tokens.operator,
  });
  return r.body;
}

describe('an approval that expires undecided (DESIGN §3)', () => {
  it('leaves its call denied by itself, with a receipt, though no one looks at the approval', async () => {
    g = await startDemoGateway({ config: { approvalTtlMs: 600 } });
    const res = await g.invoke(
      g.tokens.agent,
      'expire-unseen',
      call('demo/propose-change', { title: 'typo', diff: '-teh\n+the\n' }),
    );
    expect(res.body.status).toBe('awaiting_approval');
    let record = res.body;
    for (let i = 0; i < 200 && record.status === 'awaiting_approval'; i++) {
      await sleep(100);
      record = await stored(g, res.body.id);
    }
    expect(record.status).toBe('denied');
    expect(record.error).toMatchObject({ code: 'APPROVAL_EXPIRED', stage: 'approval' });
    expect((await verifiedReceipt(g, record.id)).predicate).toMatchObject({ status: 'denied' });
    // The agent coming back later gets the same decided call, not a new one.
    const again = await g.invoke(
      g.tokens.agent,
      'expire-unseen',
      call('demo/propose-change', { title: 'typo', diff: '-teh\n+the\n' }),
    );
    expect(again.body.id).toBe(record.id);
    expect(again.body.status).toBe('denied');
  }, 120_000);
});
