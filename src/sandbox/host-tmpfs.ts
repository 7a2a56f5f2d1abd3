import { execFile } from 'node:child_process';
import { chmod, mkdir, readFile, realpath, rm } from 'node:fs/promises';
import { resolve } from 'node:path';
import { promisify } from 'node:util';
import { ErrorCode, GatehouseError } from '../core/index.js';

const execHere = promisify(execFile);

/**
 * Runs `mount` or `umount` with `args`; throws (with the command's `stderr` on the error) when it
 * fails. The sandbox's runs them in its spawner ({@link BwrapSandbox.hostCommand}): a spawn from
 * the gateway's large process costs milliseconds of its event loop.
 */
export type HostCommandRunner = (
  command: 'mount' | 'umount',
  args: readonly string[],
) => Promise<void>;

/** Runs the command from this process. */
export const runHere: HostCommandRunner = async (command, args) => {
  await execHere(command, [...args]);
};

/**
 * Mounts a tmpfs named `source` at `dir` (which must exist). What a sandbox binds from it shows in its /proc/self/mountinfo as a path
 * inside this filesystem (`/name/file` on `source`), never as the host's path: this is how the
 * gateway keeps its directories out of a sandbox's sight.
 * @throws GatehouseError UNAVAILABLE when it cannot be mounted (not root), naming `what` and `hint`.
 */
export async function mountTmpfs(
  dir: string,
  o: { source: string; options: string; what: string; hint?: string },
  run: HostCommandRunner = runHere,
): Promise<void> {
  try {
    await run('mount', ['-t', 'tmpfs', '-o', o.options, o.source, dir]);
  } catch (err) {
    const why = (err as { stderr?: string }).stderr?.trim() || (err as Error).message;
    throw new GatehouseError(
      ErrorCode.UNAVAILABLE,
      `Cannot mount ${o.what} at ${dir} (it needs root): ${why}.${o.hint === undefined ? '' : ` ${o.hint}`}`,
      { cause: err },
    );
  }
}

/**
 * Unmounts every filesystem stacked at `dir` (a crash may have left one under ours). Safe to repeat.
 * What is mounted is read from /proc/self/mountinfo rather than asked of `mountpoint`: a process
 * spawned from the gateway (a large one) costs milliseconds, and this runs at the end of every
 * sandboxed call.
 */
export async function unmountAll(dir: string, run: HostCommandRunner = runHere): Promise<void> {
  // The mount table names the real path, as `mountpoint` would resolve it.
  const at = await realpath(dir).catch(() => resolve(dir));
  for (let i = 0; i < 8; i += 1) {
    if (mountsAt(await readFile('/proc/self/mountinfo', 'utf8'), at) === 0) return;
    await run('umount', ['--lazy', dir]).catch(() => undefined);
  }
}

/**
 * How many mounts of a /proc/<pid>/mountinfo text are at `dir` (absolute, normalised). Its fifth
 * field is the mount point, with space, tab, newline and backslash written as octal escapes.
 */
export function mountsAt(mountinfo: string, dir: string): number {
  let n = 0;
  for (const line of mountinfo.split('\n')) {
    const point = line.split(' ')[4];
    if (point === undefined) continue;
    const decoded = point.replace(/\\([0-7]{3})/g, (_, o: string) =>
      String.fromCharCode(parseInt(o, 8)),
    );
    if (decoded === dir) n += 1;
  }
  return n;
}

/** A directory of this gateway's for files it binds into sandboxes, emptied at start. */
export interface ScratchDir {
  readonly path: string;
  /** Unmounts its tmpfs (if any) and removes it. Safe to repeat. */
  close(): Promise<void>;
}

/**
 * Empties `path` of what a crashed predecessor left and makes it afresh (0711: sandbox users pass
 * through to the 0700 directories of their own inside). With `tmpfs` (a root gateway) it is a
 * small tmpfs named `source`, so the sandboxes that bind files from it cannot read the host's
 * directories in their mount table.
 */
export async function openScratch(
  path: string,
  o: { tmpfs: boolean; source: string; sizeBytes: number },
): Promise<ScratchDir> {
  await mkdir(path, { recursive: true, mode: 0o711 });
  await unmountAll(path);
  await rm(path, { recursive: true, force: true });
  await mkdir(path, { mode: 0o711 });
  if (o.tmpfs) {
    await mountTmpfs(path, {
      source: o.source,
      options: `size=${o.sizeBytes},mode=0711,nosuid,nodev`,
      what: `the scratch tmpfs ${o.source}`,
    });
  }
  await chmod(path, 0o711);
  let closing: Promise<void> | null = null;
  return {
    path,
    close: () =>
      (closing ??= (async () => {
        if (o.tmpfs) await unmountAll(path);
        await rm(path, { recursive: true, force: true });
      })()),
  };
}
