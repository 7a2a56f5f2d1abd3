import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import type { DemoTokens } from '../../src/app/index.js';
import type { InvocationRecord } from '../../src/invocation/index.js';
import { api, firstRunning, useServers } from '../helpers/cli.js';
import { alive, processTree } from '../helpers/processes.js';
import { cgroupDirsNamed, leaseRowsOf, processesMatching } from '../helpers/sandbox-tools.js';
import { storedRowsOf } from '../helpers/stored-rows.js';

const { start, tempDir, removeAfter } = useServers();

/** The workspace directories of a lease, wherever this build keeps workspaces. */
function workspaceDirs(dataDir: string, leaseId: string): string[] {
  const candidates = [join(dataDir, 'workspaces', leaseId)];
  for (const e of readdirSync(tmpdir()))
    if (e.startsWith('gatehouse')) candidates.push(join(tmpdir(), e, 'workspaces', leaseId));
  return candidates.filter((c) => existsSync(c));
}

describe('a Gatehouse killed with SIGKILL while a sandboxed call runs', () => {
  it('leaves no sandbox process, cgroup or workspace behind after restart, and the lease reaped', async () => {
    const dir = tempDir('gatehouse-sandbox-crash-');
    const first = await start(dir);
    const tokens = JSON.parse(readFileSync(join(dir, 'demo-tokens.json'), 'utf8')) as DemoTokens;
    const mark = `sleep 59.${process.pid % 1000}`;
    const pending = api(
      first.url,
      'POST',
      '/v1/invocations',
      tokens.agent,
      { tool: { id: 'demo/sh', version: '1.0.0' }, input: { script: mark }, environment: 'dev' },
      'crash-sh',
    );
    pending.catch(() => undefined);

    const running = await firstRunning<InvocationRecord>(first.url, tokens.operator, 250, 20);
    expect(running?.tool.id).toBe('demo/sh');
    const leaseId = String(running!.lease?.id);
    // The sandbox really runs: its process, cgroups and workspace exist.
    for (let i = 0; i < 250 && processesMatching(mark).length === 0; i++) await sleep(20);
    expect(processesMatching(mark).length).toBeGreaterThan(0);
    expect(cgroupDirsNamed(leaseId).length).toBeGreaterThan(0);
    const workspaces = workspaceDirs(dir, leaseId);
    expect(workspaces).toHaveLength(1);
    // Workspaces may live outside the data directory (a sandbox root): remove that too at the end.
    const root = dirname(dirname(workspaces[0]!));
    if (!root.startsWith(dir)) removeAfter(root);
    const oldRun = processTree(first.pid).filter((p) => p.pid !== first.pid);
    expect(oldRun.some((p) => p.cmdline.includes(mark))).toBe(true);

    await first.kill('SIGKILL');
    await expect(pending).rejects.toThrow();

    const second = await start(dir);
    // Right after start: nothing of the old run is left.
    expect(oldRun.filter(alive)).toEqual([]);
    expect(processesMatching(mark)).toEqual([]);
    expect(cgroupDirsNamed(leaseId)).toEqual([]);
    expect(workspaces.filter((w) => existsSync(w))).toEqual([]);

    const record = await api<InvocationRecord>(
      second.url,
      'GET',
      `/v1/invocations/${running!.id}`,
      tokens.operator,
    );
    expect(record.body.status).toBe('uncertain');
    expect(record.body.error?.code).toBe('GATEWAY_RESTARTED');
    expect(record.body.lease?.id).toBe(leaseId);

    await second.kill('SIGTERM');
    const lease = (await leaseRowsOf(dir)).find((l) => l.id === leaseId);
    expect(lease?.status).toBe('reaped');
    expect(lease?.holder).toBe(`invocation/${running!.id}`);
    const reaped = (await storedRowsOf<{ record: string }>(dir, 'SELECT record FROM audit_records'))
      .map((r) => JSON.parse(r.record) as { type: string; subject: string; actor: string })
      .filter((r) => r.type === 'lease.reaped' && r.subject === `lease/${leaseId}`);
    expect(reaped).toHaveLength(1);
    expect(reaped[0]!.actor).toBe('reaper');
  });
});
