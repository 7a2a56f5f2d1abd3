import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { Workspaces } from '../../src/sandbox/index.js';
import { callAsk, leasesOver } from '../helpers/sandbox-leases.js';

let root: string | undefined;
afterEach(() => {
  if (root) rmSync(root, { recursive: true, force: true });
  root = undefined;
});

describe('a lease being set up', () => {
  it('is left alone by a reaper pass that runs while its workspace is made', async () => {
    root = mkdtempSync(join(tmpdir(), 'gatehouse-leases-'));
    const workspaces = new Workspaces({ root, repositories: {} });
    const { capacity, leases, reaper } = await leasesOver(root, workspaces);
    // The pass runs between the workspace being made and the call attaching to the lease.
    const fresh = workspaces.fresh.bind(workspaces);
    let reaped: string[] | undefined;
    workspaces.fresh = async (id) => {
      const made = await fresh(id);
      reaped = await reaper.runOnce();
      return made;
    };
    const held = await leases.hold(callAsk);
    expect(reaped).toEqual([]);
    expect(existsSync(held.execution.workspace)).toBe(true);
    expect(capacity.activeLeases().map((l) => l.id)).toEqual([held.lease.id]);
    await held.done();
    expect(existsSync(held.execution.workspace)).toBe(false);
  });
});
