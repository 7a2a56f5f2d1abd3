import { readdir, rename, rm } from 'node:fs/promises';
import { join } from 'node:path';

/** Paths longer than this are cut off their chain before removal (PATH_MAX is 4096). */
const HOIST_AT = 2048;
/** Most hoisting rounds; each cuts every chain by at least HOIST_AT / 256 levels. */
const MAX_ROUNDS = 10_000;

/**
 * Removes the tree at `root`, however deep. `rm` with `recursive` fails with ENAMETOOLONG once a
 * path passes PATH_MAX (a chain of 1,000 nested directories does); then every directory deeper
 * than {@link HOIST_AT} characters is renamed to the top of the tree (a rename moves the subtree,
 * whatever its depth), cutting each chain short, and removal is tried again. Nothing is
 * followed: symbolic links are removed, never entered. Safe to repeat; a missing root is fine.
 * @throws the file system's error for anything but depth (a busy mount, an immutable file).
 */
export async function removeTree(root: string): Promise<void> {
  for (let round = 0; ; round++) {
    try {
      await rm(root, { recursive: true, force: true });
      return;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENAMETOOLONG' || round >= MAX_ROUNDS) throw err;
    }
    await hoistDeep(root, round);
  }
}

/** Renames each directory whose path is past {@link HOIST_AT} to `root/.hoisted-<round>-<n>`. */
async function hoistDeep(root: string, round: number): Promise<void> {
  let n = 0;
  const stack = [root];
  while (stack.length > 0) {
    const dir = stack.pop()!;
    let entries;
    try {
      entries = await readdir(dir, { withFileTypes: true });
    } catch {
      continue;
    }
    for (const e of entries) {
      if (!e.isDirectory()) continue;
      const path = join(dir, e.name);
      if (path.length > HOIST_AT) {
        await rename(path, join(root, `.hoisted-${round}-${n++}`));
      } else stack.push(path);
    }
  }
}
