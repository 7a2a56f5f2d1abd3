import { afterEach, describe, expect, it } from 'vitest';
import { systemClock } from '../../src/core/index.js';
import { recoverInterrupted } from '../../src/invocation/index.js';
import type { InvocationRecord } from '../../src/invocation/index.js';
import { runCli } from '../helpers/cli.js';
import { call, startDemoGateway } from '../helpers/gateway-fixture.js';
import type { DemoGateway } from '../helpers/gateway-fixture.js';

let g: DemoGateway | undefined;
afterEach(async () => {
  await g?.close();
  g = undefined;
});

/**
 * A node that only paused (a long GC, a stopped VM) is taken for dead by another, which settles its
 * running calls `uncertain`. When it wakes and its call ends, what it would record must not
 * overwrite the survivor's decision: each later step of a call is written only if the call is
 * still as this node last stored it.
 */
describe('a node taken over while it was only paused', () => {
  it('records nothing of its late outcome: the call stays as the survivor settled it, the caller learns it is uncertain, and the audit log verifies', async () => {
    g = await startDemoGateway();
    const gateway = g;
    const store = gateway.gateway.storage.invocations;
    const pending = gateway.invoke(
      gateway.tokens.agent,
      'paused-node',
      call('demo/sh', { script: 'sleep 2; echo the-late-$((40 + 2))' }),
    );
    // The call runs (recorded `running` before its effect)…
    let running: InvocationRecord | undefined;
    for (let i = 0; i < 200 && running === undefined; i += 1) {
      const [newest] = await store.list('acme', { status: 'running', limit: 1 });
      running = newest;
      if (running === undefined) await new Promise((ok) => setTimeout(ok, 50));
    }
    expect(running, 'the call was recorded running').toBeDefined();
    // …when another node takes this one for dead and settles its calls.
    const settled = await recoverInterrupted({
      store,
      signer: gateway.gateway.keyring,
      clock: systemClock,
      nodes: [gateway.gateway.nodeId],
      lost: { node: gateway.gateway.nodeId, by: 'node-b' },
    });
    expect(settled.map((r) => r.id)).toEqual([running!.id]);

    const res = await pending;
    // The caller is answered as a retry of an unresolved uncertain call is.
    expect(res.status, JSON.stringify(res.body)).toBe(409);
    expect(res.body.error?.code).toBe('EFFECT_UNCERTAIN');
    const stored = (await store.get('acme', running!.id))!;
    expect(stored.status).toBe('uncertain');
    expect(stored.error?.code).toBe('NODE_LOST');
    expect(JSON.stringify(stored)).not.toContain('the-late-42');

    await gateway.stop();
    const verified = await runCli(['audit', 'verify', '--data', gateway.dataDir]);
    expect(verified.stderr).toBe('');
    expect(verified.code).toBe(0);
  }, 60_000);
});
