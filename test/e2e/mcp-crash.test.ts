import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { api, useServers } from '../helpers/cli.js';
import type { ServerProcess } from '../helpers/cli.js';
import { alive, processTree } from '../helpers/processes.js';
import type { Proc } from '../helpers/processes.js';
import { cgroupDirsNamed, leaseRowsOf } from '../helpers/sandbox-tools.js';
import { requireInTest } from '../helpers/prerequisites.js';

const { start, tempDir } = useServers();

/** The demo's server-everything processes under the gateway (it connects while seeding). */
async function upstreamOf(gateway: ServerProcess): Promise<Proc[]> {
  for (let i = 0; i < 250; i++) {
    const found = processTree(gateway.pid).filter((p) =>
      p.cmdline.includes('server-everything/dist/index.js'),
    );
    if (found.length > 0) return processTree(gateway.pid).filter((p) => p.pid !== gateway.pid);
    await sleep(20);
  }
  throw new Error('the demo upstream did not start');
}

async function gone(procs: Proc[]): Promise<Proc[]> {
  for (let i = 0; i < 150 && procs.some(alive); i++) await sleep(20);
  return procs.filter(alive);
}

describe('a Gatehouse killed with SIGKILL leaves no MCP upstream behind', () => {
  it('a sandboxed stdio upstream dies with it; the restart reaps its cgroup and lease', async (ctx) => {
    const dir = tempDir('gatehouse-mcp-crash-');
    const first = await start(dir);
    const upstream = await upstreamOf(first);
    const lease = (await leaseRowsOf(dir)).find(
      (l) => l.holder.startsWith('mcp/') && l.status === 'active',
    );
    // Without a sandbox on this machine the demo runs it directly: the second test covers that.
    const ready = await api<{ sandbox: string }>(first.url, 'GET', '/readyz');
    requireInTest(
      ctx,
      'the Linux sandbox',
      ready.body.sandbox === 'ok' ? null : ready.body.sandbox,
    );
    expect(lease, 'the sandboxed upstream holds an active mcp/ lease').toBeDefined();
    expect(cgroupDirsNamed(lease!.id).length).toBeGreaterThan(0);

    await first.kill('SIGKILL');
    expect(await gone(upstream)).toEqual([]);

    const second = await start(dir);
    expect(cgroupDirsNamed(lease!.id)).toEqual([]);
    await second.kill('SIGTERM');
    expect((await leaseRowsOf(dir)).find((l) => l.id === lease!.id)?.status).toBe('reaped');
  });

  it('an unsandboxed stdio upstream dies with it too (the kernel kills it, not its stdin closing)', async () => {
    const dir = tempDir('gatehouse-mcp-crash-plain-');
    const first = await start(dir, 20_000, { GATEHOUSE_SANDBOX: 'off' });
    const upstream = await upstreamOf(first);
    // Stopped, the server cannot read the end of its stdin: only a signal ends it.
    for (const p of upstream) process.kill(p.pid, 'SIGSTOP');
    await first.kill('SIGKILL');
    expect(await gone(upstream)).toEqual([]);
  });
});
