import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { BwrapSandbox } from '../../src/sandbox/index.js';
import { skipWithout } from '../helpers/prerequisites.js';

const FREEZER = '/sys/fs/cgroup/freezer';
const HIERARCHIES = ['memory', 'cpu', 'pids', 'freezer', 'cpuacct'].map(
  (c) => `/sys/fs/cgroup/${c}`,
);
const cgroupParent = `gatehouse/test-frozen-${process.pid}`;
const stateDir = await mkdtemp(join(tmpdir(), 'gatehouse-frozen-state-'));
const first = await BwrapSandbox.start({ stateDir, cgroupParent });
const unavailable =
  (await first.check()) ?? (existsSync(FREEZER) ? null : 'the cgroup v1 freezer is not mounted');
await first.close();

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return readFileSync(`/proc/${pid}/stat`, 'utf8').split(' ')[2] !== 'Z';
  } catch {
    return false;
  }
}

describe.skipIf(skipWithout('cgroup v1 with the freezer, bubblewrap', unavailable))(
  'a gateway killed while a teardown froze a cgroup',
  () => {
    afterAll(() => rm(stateDir, { recursive: true, force: true }));

    it('thaws, empties and removes that cgroup at its next start', async () => {
      // What a teardown leaves when the gateway dies between freezing and thawing.
      const dirs = HIERARCHIES.filter(existsSync).map((h) => `${h}/${cgroupParent}/orphan-1`);
      for (const dir of dirs) mkdirSync(dir, { recursive: true });
      const child = spawn('/bin/sleep', ['300'], { stdio: 'ignore', detached: true });
      child.unref();
      const pid = child.pid!;
      for (const dir of dirs) writeFileSync(`${dir}/cgroup.procs`, String(pid));
      writeFileSync(`${FREEZER}/${cgroupParent}/orphan-1/freezer.state`, 'FROZEN');
      const state = `${FREEZER}/${cgroupParent}/orphan-1/freezer.state`;
      for (let i = 0; i < 100 && readFileSync(state, 'utf8').trim() !== 'FROZEN'; i++)
        await new Promise((r) => setTimeout(r, 10));
      expect(readFileSync(state, 'utf8').trim()).toBe('FROZEN');

      const next = await BwrapSandbox.start({ stateDir, cgroupParent });
      try {
        expect(await next.reapOrphans()).toEqual(['orphan-1']);
        expect(alive(pid)).toBe(false);
        expect(dirs.filter(existsSync)).toEqual([]);
      } finally {
        await next.close();
        if (alive(pid)) {
          writeFileSync(state, 'THAWED');
          process.kill(pid, 'SIGKILL');
        }
      }
    });
  },
);
