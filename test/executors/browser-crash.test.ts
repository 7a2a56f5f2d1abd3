import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import type { DemoTokens } from '../../src/app/index.js';
import { api, useServers } from '../helpers/cli.js';
import { skipWithout } from '../helpers/prerequisites.js';
import { alive, processTree } from '../helpers/processes.js';
import { cgroupDirsNamed, invocationLeasesOf } from '../helpers/sandbox-tools.js';
import { missingChromium, sandboxedChromium } from './browser-fixture.js';

const unavailable = skipWithout('Chromium (Debian package chromium)', missingChromium());
const { start, tempDir } = useServers();

describe.skipIf(unavailable)('a Gatehouse killed with SIGKILL while a browser call runs', () => {
  it('leaves no Chromium process, cgroup or workspace of its lease after restart', async () => {
    const dir = tempDir('gatehouse-browser-crash-');
    const first = await start(dir, 60_000);
    const tokens = JSON.parse(readFileSync(join(dir, 'demo-tokens.json'), 'utf8')) as DemoTokens;
    const board = `http://127.0.0.1:${(JSON.parse(readFileSync(join(dir, 'demo-tickets.json'), 'utf8')) as { port: number }).port}/`;
    const before = new Set(sandboxedChromium().map((p) => p.pid));
    const pending = api(
      first.url,
      'POST',
      '/v1/invocations',
      tokens.agent,
      {
        tool: { id: 'demo/browse', version: '1.0.0' },
        input: { steps: [{ action: 'goto', url: board }, { action: 'screenshot' }] },
        environment: 'dev',
      },
      'crash-browse',
    );
    pending.catch(() => undefined);

    // A read call keeps no running record (nothing to recover): wait for its Chromium instead.
    const ours = () => sandboxedChromium().filter((p) => !before.has(p.pid));
    for (let i = 0; i < 3000 && ours().length === 0; i++) await sleep(20);
    expect(ours().length, 'Chromium started in the sandbox').toBeGreaterThan(0);
    const leaseId = (await invocationLeasesOf(dir))[0]!.id;
    expect(cgroupDirsNamed(leaseId).length, 'the lease has its cgroups').toBeGreaterThan(0);
    const workspaces = workspaceDirs(dir, leaseId);
    expect(workspaces, 'the lease has its workspace').toHaveLength(1);
    const oldRun = processTree(first.pid).filter((p) => p.pid !== first.pid);

    await first.kill('SIGKILL');
    await expect(pending).rejects.toThrow();

    const second = await start(dir, 60_000);
    expect(oldRun.filter(alive)).toEqual([]);
    expect(ours()).toEqual([]);
    expect(cgroupDirsNamed(leaseId)).toEqual([]);
    expect(workspaces.filter((w) => existsSync(w))).toEqual([]);
    await second.kill('SIGTERM');
    expect((await invocationLeasesOf(dir)).map((l) => [l.id, l.status])).toEqual([
      [leaseId, 'reaped'],
    ]);
  }, 180_000);
});

/** The workspace directories of a lease, wherever this build keeps workspaces. */
function workspaceDirs(dataDir: string, leaseId: string): string[] {
  const candidates = [join(dataDir, 'workspaces', leaseId)];
  for (const e of readdirSync(tmpdir()))
    if (e.startsWith('gatehouse')) candidates.push(join(tmpdir(), e, 'workspaces', leaseId));
  return candidates.filter((c) => existsSync(c));
}
