import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ExecutionCapacity, Reaper } from '../../src/capacity/index.js';
import { ManualClock, SequentialIds } from '../../src/core/index.js';
import { Workspaces } from '../../src/sandbox/index.js';
import { MemoryLeaseStore } from '../helpers/memory-lease-store.js';

let root: string | undefined;
afterEach(() => {
  // A failed test can leave the chain deeper than Node's rm reaches; GNU rm handles any depth.
  if (root) execFileSync('rm', ['-rf', root]);
  root = undefined;
});

/** A chain of `depth` nested directories under `dir`, made with relative paths (as a tool can). */
function deepChain(dir: string, depth: number): void {
  mkdirSync(dir, { recursive: true });
  const script = `import os, sys
os.chdir(sys.argv[1])
for _ in range(int(sys.argv[2])):
    os.mkdir('dddd')
    os.chdir('dddd')
open('f', 'w').write('x')`;
  execFileSync('python3', ['-c', script, dir, String(depth)]);
}

describe('workspace removal', () => {
  it('removes a workspace whose directory chain is deeper than PATH_MAX (1,100 levels)', async () => {
    root = mkdtempSync(join(tmpdir(), 'gatehouse-ws-'));
    const ws = new Workspaces({ root, repositories: {} });
    const path = ws.pathFor('deep-lease');
    deepChain(path, 1_100);
    // Deeper than PATH_MAX: the plain recursive rm of Node cannot remove it.
    expect(() => rmSync(path, { recursive: true, force: true })).toThrow(/ENAMETOOLONG/);
    await ws.remove('deep-lease', 'plain');
    expect(existsSync(path)).toBe(false);
  });

  it('one workspace the reaper cannot remove does not keep the others on disk', async () => {
    root = mkdtempSync(join(tmpdir(), 'gatehouse-ws-'));
    const ws = new Workspaces({ root, repositories: {} });
    for (const id of ['a-lease', 'b-lease', 'c-lease']) {
      mkdirSync(ws.pathFor(id));
      writeFileSync(join(ws.pathFor(id), 'f'), 'x');
    }
    const capacity = await ExecutionCapacity.open({
      store: new MemoryLeaseStore(),
      clock: { now: () => 0 },
      ids: { next: () => 'unused' },
      pools: [],
    });
    const failures: string[] = [];
    const reaper = new Reaper({
      capacity,
      clock: { now: () => 0 },
      holderDone: () => Promise.resolve(true),
      inUse: () => false,
      workspaces: () => ws.existing(),
      removeWorkspace: async (id) => {
        if (id === 'a-lease') throw new Error('the file system refused');
        await ws.remove(id, 'plain');
      },
      onError: (what) => failures.push(what),
    });
    await expect(reaper.runOnce()).resolves.toEqual([]);
    expect(failures).toEqual(['workspace a-lease']);
    expect((await ws.existing()).sort()).toEqual(['a-lease']);
  });

  it('keeps the workspace of a lease granted while a pass reads the workspace list', async () => {
    root = mkdtempSync(join(tmpdir(), 'gatehouse-ws-'));
    const ws = new Workspaces({ root, repositories: {} });
    const clock = new ManualClock();
    const capacity = await ExecutionCapacity.open({
      store: new MemoryLeaseStore(),
      clock,
      ids: new SequentialIds('lease'),
      pools: [{ name: 'p', cpus: 1, memoryBytes: 2 ** 20, gpus: 0, leases: 1 }],
    });
    const reaper = new Reaper({
      capacity,
      clock,
      holderDone: () => Promise.resolve(false),
      inUse: () => false,
      workspaces: async () => {
        // A call is granted its lease and makes its workspace while the list is read.
        const lease = await capacity.acquire(
          {
            tenant: 't1',
            agent: 'a1',
            pool: 'p',
            holder: 'invocation/i1',
            resources: { cpus: 1, memoryBytes: 2 ** 20, gpus: 0, pids: 16 },
            timeoutMs: 1_000,
            readOnlyMounts: [],
            egressAllow: [],
            credentials: [],
            worktree: null,
            ttlMs: 60_000,
          },
          { budgetMs: 0, signal: new AbortController().signal },
        );
        mkdirSync(ws.pathFor(lease.id));
        return ws.existing();
      },
      removeWorkspace: (id) => ws.remove(id, 'plain'),
      onError: (what, err) => {
        throw new Error(`the reaper failed on ${what}`, { cause: err });
      },
    });
    await reaper.runOnce();
    expect(await ws.existing()).toEqual(['lease-00000001']);
  });
});
