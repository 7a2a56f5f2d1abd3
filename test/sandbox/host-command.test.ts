import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { Workspaces } from '../../src/sandbox/index.js';
import type { HostCommandRunner } from '../../src/sandbox/index.js';
import { skipWithout } from '../helpers/prerequisites.js';
import { startSandbox } from './bwrap-fixture.js';

const fixture = await startSandbox('host-command');
const noSandbox = skipWithout(
  'the Linux sandbox as root (bubblewrap, seccomp, cgroups)',
  fixture.unavailable ?? (process.getuid?.() === 0 ? null : 'not root: nothing can be mounted'),
);
const root = mkdtempSync(join(tmpdir(), 'gatehouse-host-command-'));
const mounted = (path: string) =>
  readFileSync('/proc/self/mounts', 'utf8')
    .split('\n')
    .some((l) => l.split(' ')[1] === path);

describe.skipIf(noSandbox)('mount and umount run by the sandbox spawner', () => {
  afterAll(async () => {
    await fixture.close();
    rmSync(root, { recursive: true, force: true });
  });

  it('mounts and unmounts a bounded workspace through the spawner, and only when mounted', async () => {
    const ran: string[] = [];
    const viaSpawner: HostCommandRunner = async (command, args) => {
      ran.push(command);
      await fixture.sandbox.hostCommand(command, args);
    };
    const workspaces = new Workspaces({
      root: join(root, 'workspaces'),
      repositories: {},
      maxBytes: 2 ** 20,
      hostCommand: viaSpawner,
    });
    const ws = await workspaces.fresh('lease-1');
    expect(mounted(ws.path)).toBe(true);
    await workspaces.remove('lease-1', 'plain');
    expect(mounted(ws.path)).toBe(false);
    expect(existsSync(ws.path)).toBe(false);
    expect(ran).toEqual(['mount', 'umount']);
    // Nothing mounted there any more: removing it again spawns nothing.
    await workspaces.remove('lease-1', 'plain');
    expect(ran).toEqual(['mount', 'umount']);
  });

  it("reports a command's failure with its message, and runs nothing but mount and umount", async () => {
    await expect(
      fixture.sandbox.hostCommand('mount', ['-t', 'tmpfs', 'x', join(root, 'no-such-dir')]),
    ).rejects.toThrow(/mount .* failed \(\d+\): .*no-such-dir/);
    await expect(
      fixture.sandbox.hostCommand('rm' as 'mount', ['-rf', join(root, 'canary')]),
    ).rejects.toThrow(/rm is not a host command the spawner runs/);
  });

  it('runs from the gateway once the sandbox is closed (a workspace removed after it)', async () => {
    const other = await startSandbox('host-command-closed');
    await other.sandbox.close();
    const dir = mkdtempSync(join(root, 'late-'));
    await other.sandbox.hostCommand('mount', ['-t', 'tmpfs', '-o', 'size=1m', 'gh-test', dir]);
    expect(mounted(dir)).toBe(true);
    await other.sandbox.hostCommand('umount', [dir]);
    expect(mounted(dir)).toBe(false);
    await other.close();
  });
});
