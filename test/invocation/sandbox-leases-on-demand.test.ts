import { existsSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { Reaper } from '../../src/capacity/index.js';
import type { LeaseAsk } from '../../src/invocation/index.js';
import { Workspaces } from '../../src/sandbox/index.js';
import { callAsk, leasesOver } from '../helpers/sandbox-leases.js';

let root: string | undefined;
afterEach(() => {
  if (root) rmSync(root, { recursive: true, force: true });
  root = undefined;
});

const ask: LeaseAsk = { ...callAsk, workspaceOnDemand: true };

/** Leases over a real workspace root, with every workspace made and removed counted. */
async function setUp() {
  root = mkdtempSync(join(tmpdir(), 'gatehouse-leases-'));
  const workspaces = new Workspaces({ root: join(root, 'workspaces'), repositories: {} });
  const counts = { fresh: 0, remove: 0 };
  const fresh = workspaces.fresh.bind(workspaces);
  workspaces.fresh = (id) => {
    counts.fresh += 1;
    return fresh(id);
  };
  const remove = workspaces.remove.bind(workspaces);
  workspaces.remove = (id, kind) => {
    counts.remove += 1;
    return remove(id, kind);
  };
  return { ...(await leasesOver(root, workspaces)), counts, workspaces };
}

describe('a call lease whose workspace is made on demand', () => {
  it('makes and removes no workspace when the executor never asks for one', async () => {
    const { capacity, leases, counts } = await setUp();
    const held = await leases.hold(ask);
    expect(held.execution.prepareWorkspace).toBeTypeOf('function');
    expect(held.execution.freshWorkspace).toBe(true);
    expect(existsSync(held.execution.workspace)).toBe(false);
    await held.done();
    expect(counts).toEqual({ fresh: 0, remove: 0 });
    expect(capacity.activeLeases()).toEqual([]);
  });

  it('makes it once when asked, keeps it from a reaper pass while held, and removes it at the end', async () => {
    const { capacity, leases, counts, reaper } = await setUp();
    const held = await leases.hold(ask);
    const prepare = held.execution.prepareWorkspace!;
    await Promise.all([prepare(), prepare()]);
    await prepare();
    expect(counts.fresh).toBe(1);
    expect(statSync(held.execution.workspace).isDirectory()).toBe(true);
    expect(await reaper.runOnce()).toEqual([]);
    expect(existsSync(held.execution.workspace)).toBe(true);
    await held.done();
    expect(counts.remove).toBe(1);
    expect(existsSync(held.execution.workspace)).toBe(false);
    expect(capacity.activeLeases()).toEqual([]);
  });

  it('is left for the reaper when the call never ends (a crash): workspace and lease go', async () => {
    const { capacity, leases, workspaces, clock } = await setUp();
    const held = await leases.hold(ask);
    await held.execution.prepareWorkspace!();
    // The next start's reaper: nothing of this process holds the lease, its invocation is done.
    const restarted = new Reaper({
      capacity,
      clock,
      inUse: () => false,
      holderDone: () => Promise.resolve(true),
      workspaces: () => workspaces.existing(),
      removeWorkspace: (id) => workspaces.remove(id, 'plain'),
    });
    expect(await restarted.runOnce()).toContain(held.lease.id);
    expect(existsSync(held.execution.workspace)).toBe(false);
    expect(capacity.activeLeases()).toEqual([]);
  });

  it('is made with the lease for a descriptor that names a worktree, and by default', async () => {
    const { leases, counts } = await setUp();
    await expect(
      leases.hold({ ...ask, needs: { worktree: { repository: 'nope', ref: 'main' } } }),
    ).rejects.toThrow(/No repository named "nope"/);
    const eager = await leases.hold({ ...ask, invocationId: 'inv-2', workspaceOnDemand: false });
    expect(eager.execution.prepareWorkspace).toBeUndefined();
    expect(existsSync(eager.execution.workspace)).toBe(true);
    await eager.done();
    expect(existsSync(eager.execution.workspace)).toBe(false);
    expect(counts).toEqual({ fresh: 1, remove: 1 });
  });
});
