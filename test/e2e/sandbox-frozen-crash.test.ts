import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterEach, describe, expect, it } from 'vitest';
import type { DemoTokens } from '../../src/app/index.js';
import type { InvocationRecord } from '../../src/invocation/index.js';
import { api, firstRunning, useServers } from '../helpers/cli.js';
import { skipWithout } from '../helpers/prerequisites.js';
import { cgroupDirsNamed, processesMatching } from '../helpers/sandbox-tools.js';

const FREEZER = '/sys/fs/cgroup/freezer';
const { start, tempDir } = useServers();

/** The freezer directory of a run's cgroup, once the run's processes are in it. */
function freezerDir(leaseId: string): string | undefined {
  return cgroupDirsNamed(leaseId).find((d) => d.startsWith(`${FREEZER}/`));
}

/** Frozen cgroups this test made: thawed and emptied afterwards, whatever the test found. */
const frozen: string[] = [];
afterEach(() => {
  for (const dir of frozen.splice(0)) {
    if (!existsSync(dir)) continue;
    writeFileSync(`${dir}/freezer.state`, 'THAWED');
    for (const pid of readFileSync(`${dir}/cgroup.procs`, 'utf8').split('\n').filter(Boolean)) {
      try {
        process.kill(Number(pid), 'SIGKILL');
      } catch {
        // Gone.
      }
    }
  }
});

describe.skipIf(
  skipWithout('cgroup v1 with the freezer', existsSync(FREEZER) ? null : 'no v1 freezer mounted'),
)('a Gatehouse killed with SIGKILL while a teardown has a sandbox cgroup frozen', () => {
  it('leaves no frozen cgroup and no bubblewrap behind, without a restart', async () => {
    const dir = tempDir('gatehouse-frozen-crash-');
    const server = await start(dir);
    const tokens = JSON.parse(readFileSync(join(dir, 'demo-tokens.json'), 'utf8')) as DemoTokens;
    const mark = `sleep 58.${process.pid % 1000}`;
    const pending = api(
      server.url,
      'POST',
      '/v1/invocations',
      tokens.agent,
      { tool: { id: 'demo/sh', version: '1.0.0' }, input: { script: mark }, environment: 'dev' },
      'frozen-crash-sh',
    );
    pending.catch(() => undefined);
    const running = await firstRunning<InvocationRecord>(server.url, tokens.operator, 250, 20);
    const leaseId = String(running?.lease?.id);
    for (let i = 0; i < 250 && processesMatching(mark).length < 2; i++) await sleep(20);
    // bubblewrap and the program it runs, in the run's cgroup.
    expect(processesMatching(mark).length).toBeGreaterThanOrEqual(2);
    const cgroup = freezerDir(leaseId);
    expect(cgroup).toBeDefined();

    // What a teardown does first (and a kill -9 can stop it right after): freeze the cgroup.
    frozen.push(cgroup!);
    writeFileSync(`${cgroup!}/freezer.state`, 'FROZEN');
    for (
      let i = 0;
      i < 100 && readFileSync(`${cgroup!}/freezer.state`, 'utf8').trim() !== 'FROZEN';
      i++
    )
      await sleep(10);
    expect(readFileSync(`${cgroup!}/freezer.state`, 'utf8').trim()).toBe('FROZEN');

    await server.kill('SIGKILL');
    await expect(pending).rejects.toThrow();

    // No gateway runs now: what is left must go by itself, within a bound.
    for (
      let i = 0;
      i < 200 && (cgroupDirsNamed(leaseId).length > 0 || processesMatching(mark).length > 0);
      i++
    )
      await sleep(50);
    expect(processesMatching(mark)).toEqual([]);
    expect(cgroupDirsNamed(leaseId)).toEqual([]);
  });
});
