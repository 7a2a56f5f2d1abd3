import { existsSync, readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { InvocationRecord } from '../../src/invocation/index.js';
import { call, startDemoGateway } from '../helpers/gateway-fixture.js';
import type { DemoGateway, ErrorBody } from '../helpers/gateway-fixture.js';
import { skipWithout } from '../helpers/prerequisites.js';
import { publishAgent, shTool, verifiedReceipt } from '../helpers/sandbox-tools.js';
import { mountSmallDisk, tmpfsProblem } from '../helpers/tmpfs.js';
import type { SmallDisk } from '../helpers/tmpfs.js';

/**
 * The data directory and the sandboxes' workspaces on one small tmpfs: a sandboxed write call
 * fills it, so the gateway's own writes fail with a really full disk (issue 10, item 11).
 */
const skip = skipWithout('a mountable tmpfs', tmpfsProblem());

let disk: SmallDisk;
let g: DemoGateway;
let agent: string;

/** One call of attempt `a1` of run `r1` (they share a lease and workspace, one at a time). */
function inAttempt(key: string, script: string) {
  return g.invoke(agent, key, {
    ...(call('test/disk-sh', { script }) as object),
    runId: 'r1',
    attemptId: 'a1',
  });
}

/** Polls `probe` until it returns a value (at most ~30 s, so a regression fails instead of hanging). */
async function eventually<T>(probe: () => Promise<T | undefined>): Promise<T | undefined> {
  for (let i = 0; i < 300; i++) {
    const v = await probe();
    if (v !== undefined) return v;
    await sleep(100);
  }
  return undefined;
}

describe.skipIf(skip)('a disk that fills during a write call', () => {
  beforeAll(async () => {
    disk = mountSmallDisk(48);
    g = await startDemoGateway({
      dataDir: join(disk.path, 'data'),
      // Workspaces on the same small disk as the data (not each its own tmpfs), so a call can fill it.
      sandbox: { root: join(disk.path, 'sandbox'), workspaceMb: 0 },
      listen: true,
      // The database must be on the disk that fills: SQLite whatever the run's backend.
      backend: 'sqlite',
    });
    agent = await publishAgent(g, 'disk-agent', [shTool('test/disk-sh')]);
  });

  afterAll(async () => {
    await g?.close();
    disk?.remove();
  });

  it('answers 503 (not 500), says not ready, settles the call uncertain once writes work again, and never wedges the attempt', async () => {
    expect((await g.inject('GET', '/readyz')).status).toBe(200);
    const filled = await inAttempt(
      'fill-1',
      'head -c 1G /dev/zero > fill 2>/dev/null; echo filled',
    );
    expect(filled.status, JSON.stringify(filled.body)).toBe(503);
    const error = (filled.body as unknown as ErrorBody).error;
    expect(error.code).toBe('UNAVAILABLE');
    expect(error.message).toMatch(/disk is full/);

    const ready = await g.inject<{ status: string; storage: string }>('GET', '/readyz');
    expect(ready.status).toBe(503);
    expect(ready.body.status).toBe('storage failing');
    expect(ready.body.storage).toMatch(/SQLITE_FULL/);

    // What storage holds: the call is running (recorded before it ran), its outcome is not.
    const listed = await g.inject<{ invocations: InvocationRecord[] }>(
      'GET',
      '/v1/invocations?limit=5',
      { token: g.tokens.operator },
    );
    const stuck = listed.body.invocations.find((r) => r.idempotencyKey === 'fill-1');
    expect(stuck?.status).toBe('running');

    // Free the disk: no restart, the gateway notices by itself.
    const workspaces = join(disk.path, 'sandbox', 'workspaces');
    for (const w of readdirSync(workspaces)) rmSync(join(workspaces, w, 'fill'), { force: true });

    const settled = await eventually(async () => {
      const r = await g.inject<InvocationRecord>('GET', `/v1/invocations/${stuck!.id}`, {
        token: g.tokens.operator,
      });
      return r.body.status === 'uncertain' ? r.body : undefined;
    });
    expect(settled?.error?.code).toBe('OUTCOME_NOT_RECORDED');
    expect((await verifiedReceipt(g, stuck!.id)).predicate).toMatchObject({ status: 'uncertain' });
    const uncertain = await g.inject<{ invocations: InvocationRecord[] }>('GET', '/v1/uncertain', {
      token: g.tokens.operator,
    });
    expect(uncertain.body.invocations.map((r) => r.id)).toContain(stuck!.id);
    // A retry of the same request is refused until an operator resolves the effect.
    expect(
      (await inAttempt('fill-1', 'head -c 1G /dev/zero > fill 2>/dev/null; echo filled')).status,
    ).toBe(409);
    expect(
      (
        await eventually(async () => {
          const r = await g.inject('GET', '/readyz');
          return r.status === 200 ? r : undefined;
        })
      )?.status,
    ).toBe(200);

    // The attempt's next call gets its turn (the failed touch at the end of the first released it).
    const next = await Promise.race([
      inAttempt('after-1', 'test -e fill && echo still || echo freed'),
      sleep(15_000).then(() => undefined),
    ]);
    expect(next, 'the attempt is wedged: its next call never got the lease').toBeDefined();
    expect(next!.body.status, JSON.stringify(next!.body)).toBe('observed');
    expect((next!.body.output as { stdout: string }).stdout.trim()).toBe('freed');
    expect(existsSync(workspaces)).toBe(true);
  }, 120_000);
});
