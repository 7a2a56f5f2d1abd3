import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { McpSandbox } from '../../src/app/mcp-sandbox.js';
import { ExecutionCapacity, Reaper } from '../../src/capacity/index.js';
import { ManualClock, SequentialIds } from '../../src/core/index.js';
import type { LaunchedStdio } from '../../src/mcp/index.js';
import { Workspaces } from '../../src/sandbox/index.js';
import { SqliteDatabase, SqliteLeaseStore } from '../../src/storage/index.js';
import { skipWithout } from '../helpers/prerequisites.js';
import { LIMITS, startSandbox } from '../sandbox/bwrap-fixture.js';

const fixture = await startSandbox('mcp-lease');

describe.skipIf(
  skipWithout('the Linux sandbox (bubblewrap, seccomp, cgroups)', fixture.unavailable),
)('stdio MCP servers in sandbox leases', () => {
  afterAll(() => fixture.close());

  it('a reaper pass while a connection is being granted its lease neither reaps the lease nor removes its workspace', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'gatehouse-mcp-lease-'));
    const db = await SqliteDatabase.open({ file: join(dir, 'g.db') });
    let launched: LaunchedStdio | null = null;
    try {
      const clock = new ManualClock();
      const capacity = await ExecutionCapacity.open({
        store: new SqliteLeaseStore(db),
        clock,
        ids: new SequentialIds('lease'),
        pools: [{ name: 'mcp', cpus: 1, memoryBytes: LIMITS.memoryBytes, gpus: 0, leases: 1 }],
      });
      const workspaces = new Workspaces({ root: join(dir, 'workspaces'), repositories: {} });
      const mcp = new McpSandbox({
        sandbox: fixture.sandbox,
        capacity,
        workspaces,
        pool: 'mcp',
        resources: { cpus: 1, memoryBytes: LIMITS.memoryBytes, gpus: 0, pids: LIMITS.pids },
        queueBudgetMs: 1_000,
      });
      // As the gateway wires it: an upstream's lease no live connection holds is a crash's orphan.
      const reaper = new Reaper({
        capacity,
        clock,
        inUse: (lease) => mcp.holds(lease),
        holderDone: (lease) => Promise.resolve(lease.holder.startsWith('mcp/')),
        workspaces: () => workspaces.existing(),
        removeWorkspace: (id) => workspaces.remove(id, 'plain'),
        onError: (what, err) => {
          throw new Error(`the reaper failed on ${what}`, { cause: err });
        },
      });

      const launching = mcp.launcher({ tenant: 't1', id: 'srv' })(
        { type: 'stdio', command: '/bin/cat', args: [] },
        {},
      );
      // The lease counts against the pool now; it is stored (and returned) at the next write.
      expect(capacity.activeLeases().map((l) => l.holder)).toEqual(['mcp/srv']);
      const pass = reaper.runOnce();
      launched = await launching;
      expect(await pass).toEqual([]);
      expect(await reaper.runOnce()).toEqual([]);
      const [lease] = capacity.activeLeases();
      expect(lease?.holder).toBe('mcp/srv');
      expect(existsSync(workspaces.pathFor(lease!.id))).toBe(true);

      await launched!.release();
      launched = null;
      expect(capacity.activeLeases()).toEqual([]);
      expect(await workspaces.existing()).toEqual([]);
    } finally {
      // The sandbox's close waits for its confined commands' release.
      await launched?.release();
      await db.close();
      await rm(dir, { recursive: true, force: true });
    }
  });
});
