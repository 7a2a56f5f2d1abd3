import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { missingCommand } from './prerequisites.js';

/** Null when this process can mount a tmpfs (root, `mount` on PATH); else why not. */
export function tmpfsProblem(): string | null {
  if (process.getuid?.() !== 0) return 'root (to mount a small tmpfs as a disk that fills)';
  return missingCommand('mount') ?? missingCommand('umount');
}

/** A mounted tmpfs of a fixed size: a real disk that really fills. */
export interface SmallDisk {
  path: string;
  /** Unmounts it and removes the mount point. Safe to call twice. */
  remove(): void;
}

/** Mounts a tmpfs of `sizeMb` MiB on a fresh directory under the temp dir (needs root). */
export function mountSmallDisk(sizeMb: number, prefix = 'gatehouse-disk-'): SmallDisk {
  const path = mkdtempSync(join(tmpdir(), prefix));
  execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${sizeMb}m,mode=0755`, 'tmpfs', path]);
  let mounted = true;
  return {
    path,
    remove() {
      if (mounted) execFileSync('umount', ['-l', path]);
      mounted = false;
      rmSync(path, { recursive: true, force: true });
    },
  };
}

/**
 * Unmounts every mount point under `dir` (deepest first): a gateway's bounded workspaces are
 * tmpfs mounts that outlive it (as they outlive a crash, for attempts that span a restart), so a
 * test removing its temporary sandbox directory unmounts them first.
 */
export function unmountUnder(dir: string): void {
  const prefix = dir.endsWith('/') ? dir : `${dir}/`;
  const points = readFileSync('/proc/self/mounts', 'utf8')
    .split('\n')
    .map((line) => line.split(' ')[1]?.replace(/\\040/g, ' '))
    .filter((p): p is string => p !== undefined && p.startsWith(prefix))
    .sort((a, b) => b.length - a.length);
  for (const p of points) spawnSync('umount', ['--lazy', p]);
}
