import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { ROOT, ensureBuilt, runNode } from '../helpers/cli.js';

beforeAll(() => {
  ensureBuilt();
});

describe('npm run chaos, small', () => {
  it('kills the gateway with SIGKILL during 30 mixed calls and finds nothing lost, stuck, unverified or left behind', async () => {
    const run = await runNode(join(ROOT, 'scripts', 'chaos.js'), [
      '--calls',
      '30',
      '--kills',
      '2',
      '--clients',
      '3',
    ]);
    expect(run.stderr).toBe('');
    const summary = run.stdout.trim().split('\n').pop() ?? '';
    const m =
      /^chaos PASS: 30 calls, (\d+) kill -9 during calls \+ 1 at rest, 0 lost, 0 stuck, \d+ uncertain/.exec(
        summary,
      );
    expect(m, summary).not.toBeNull();
    const duringCalls = Number(m?.[1]);
    expect(duringCalls).toBeGreaterThanOrEqual(1);
    expect(duringCalls).toBeLessThanOrEqual(2);
    expect(summary).toMatch(
      /30 receipts and inclusion proofs verified, audit log verified, 0 left behind/,
    );
    expect(run.code).toBe(0);
  }, 900_000);
});
