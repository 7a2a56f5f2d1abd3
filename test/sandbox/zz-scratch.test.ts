import { afterAll, beforeAll, expect, it } from 'vitest';
import { run, sh, startSandbox } from './bwrap-fixture.js';
import type { SandboxFixture } from './bwrap-fixture.js';

let f: SandboxFixture;
beforeAll(async () => { f = await startSandbox('scratch'); console.log('unavailable:', f.unavailable); });
afterAll(async () => { await f.close(); });

it('basic', async () => {
  const r = await sh(f, 'echo hi; echo err >&2; id; env; grep -E "CapEff|NoNewPrivs|Seccomp" /proc/self/status; cat /proc/self/cgroup; exit 3');
  console.log(r);
  expect(r.result.exitCode).toBe(3);
});
it('timing', async () => {
  const times: number[] = [];
  for (let i = 0; i < 20; i++) { const t = performance.now(); await run(f, ['true']); times.push(performance.now() - t); }
  times.sort((a, b) => a - b);
  console.log('p50', times[10], times);
});
