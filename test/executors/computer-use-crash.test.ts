import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import type { DemoTokens } from '../../src/app/index.js';
import { api, useServers } from '../helpers/cli.js';
import { skipWithout } from '../helpers/prerequisites.js';
import { alive, processTree } from '../helpers/processes.js';
import { cgroupDirsStartingWith, invocationLeasesOf } from '../helpers/sandbox-tools.js';
import { missingDesktop } from './computer-use-fixture.js';

const unavailable = skipWithout('Xvfb, xdotool, ImageMagick and xterm', missingDesktop());
const { start, tempDir } = useServers();

describe.skipIf(unavailable)(
  'a Gatehouse killed with SIGKILL while a computer-use call runs',
  () => {
    it('leaves no Xvfb, xterm, cgroup or workspace of its lease after restart', async () => {
      const dir = tempDir('gatehouse-desktop-crash-');
      const first = await start(dir, 60_000);
      const tokens = JSON.parse(readFileSync(join(dir, 'demo-tokens.json'), 'utf8')) as DemoTokens;
      // A write-class call outside an attempt: the restart finds it interrupted and reaps its lease.
      const pending = api(
        first.url,
        'POST',
        '/v1/invocations',
        tokens.agent,
        {
          tool: { id: 'demo/desktop', version: '1.0.0' },
          input: {
            actions: [
              { action: 'type', text: 'echo crash > /workspace/c' },
              { action: 'key', text: 'Return' },
              { action: 'wait', duration: 10 },
            ],
          },
          environment: 'dev',
        },
        'crash-desktop',
      );
      pending.catch(() => undefined);

      // The gateway's own Xvfb and xterm, by their command lines, among its descendants.
      const desktop = () =>
        processTree(first.pid).filter((p) => /^(Xvfb|xterm) /.test(cmdline(p.pid)));
      for (let i = 0; i < 3000 && desktop().length < 2; i++) await sleep(20);
      const running = desktop();
      expect(running.map((p) => cmdline(p.pid).split(' ')[0]).sort()).toEqual(['Xvfb', 'xterm']);
      const leaseId = (await invocationLeasesOf(dir))[0]!.id;
      expect(
        cgroupDirsStartingWith(`${leaseId}.desktop-`).length,
        'the desktop has cgroups',
      ).toBeGreaterThan(0);
      const workspaces = workspaceDirs(dir, leaseId);
      expect(workspaces, 'the lease has its workspace').toHaveLength(1);
      const oldRun = processTree(first.pid).filter((p) => p.pid !== first.pid);

      await first.kill('SIGKILL');
      await expect(pending).rejects.toThrow();

      const second = await start(dir, 60_000);
      expect(oldRun.filter(alive)).toEqual([]);
      expect(running.filter(alive)).toEqual([]);
      expect(cgroupDirsStartingWith(leaseId)).toEqual([]);
      expect(workspaces.filter((w) => existsSync(w))).toEqual([]);
      await second.kill('SIGTERM');
      expect((await invocationLeasesOf(dir)).map((l) => [l.id, l.status])).toEqual([
        [leaseId, 'reaped'],
      ]);
    }, 180_000);
  },
);

function cmdline(pid: number): string {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').join(' ');
  } catch {
    return '';
  }
}

/** The workspace directories of a lease, wherever this build keeps workspaces. */
function workspaceDirs(dataDir: string, leaseId: string): string[] {
  const candidates = [join(dataDir, 'workspaces', leaseId)];
  for (const e of readdirSync(tmpdir()))
    if (e.startsWith('gatehouse')) candidates.push(join(tmpdir(), e, 'workspaces', leaseId));
  return candidates.filter((c) => existsSync(c));
}
