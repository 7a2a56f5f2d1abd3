import {
  existsSync,
  mkdirSync,
  readFileSync,
  readdirSync,
  rmdirSync,
  writeFileSync,
} from 'node:fs';
import { posix } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import type { SandboxLimits } from '../sandbox.js';

/** A host user and group. */
export interface HostUser {
  uid: number;
  gid: number;
}

/** The cgroups of one run: one directory per mounted hierarchy. */
export interface RunCgroup {
  readonly id: string;
  /** The `cgroup.procs` files a process must be written to, one per hierarchy. */
  readonly procsFiles: readonly string[];
  /** Sets the memory (and memory + swap), CPU quota and pids limits. */
  setLimits(limits: SandboxLimits): void;
  /**
   * Renames the cgroup, processes and all, in every hierarchy (cgroup v1 only).
   * @throws EEXIST when a cgroup of that name exists.
   */
  renameTo(id: string): RunCgroup;
  /** Kills every process in the cgroup and waits until it is empty (bounded). Safe to repeat. */
  killAll(): Promise<void>;
  /** Peak memory and CPU time, when the kernel reports them. */
  usage(): { maxMemoryBytes: number | null; cpuMs: number | null };
  /** Which limit the run hit: the OOM killer struck, or a fork failed at the pids limit. */
  limitHit(): 'memory' | 'pids' | null;
  /** Removes the cgroup directories (their processes must be gone). Safe to repeat. */
  remove(): Promise<void>;
}

/** A cgroup hierarchy (v1 controllers or the v2 unified tree) that holds this gateway's runs. */
export interface Cgroups {
  /** For messages: e.g. `cgroup v1 (memory, cpu, pids, freezer, cpuacct)`. */
  readonly description: string;
  /**
   * True when a process of `owner` may move itself into a run's cgroup once create() gave it
   * the `cgroup.procs` files (v1); false when only root can (v2's delegation rules).
   */
  readonly ownerCanJoin: boolean;
  /** True when cgroups can be renamed (v1), so slots can be prepared before their run's id is known. */
  readonly canRename: boolean;
  /**
   * Makes a cgroup (without limits yet); with `owner`, hands it the `cgroup.procs` files (v1),
   * so a process of that user can join it.
   * @throws when it exists already or cannot be made.
   */
  create(id: string, owner: HostUser | null): RunCgroup;
  /** The cgroup of `id` as it is, to reap it. */
  existing(id: string): RunCgroup;
  /** Ids of every run cgroup present (of this gateway's parent directory). */
  list(): string[];
  /**
   * The cgroup of run `id` as another gateway of this host left it: under a sibling of this
   * gateway's parent (`gatehouse/<other instance>/<id>`), to reap the runs of a node that died.
   * Empty when no sibling holds one.
   */
  leftByOthers(id: string): RunCgroup[];
  /** Removes this gateway's parent directories if they are empty (at close). */
  removeParentIfEmpty(): void;
  /** This gateway's parent directories, one per hierarchy: each run's cgroup is one below. */
  parentDirs(): string[];
}

/**
 * The parents beside `parent` (`<root>/<other>` for `parent` = `<root>/<this>`) that hold a
 * directory `id` under any of `bases`; none when `parent` has no root of its own.
 */
export function siblingParentsHolding(
  bases: readonly string[],
  parent: string,
  id: string,
): string[] {
  const root = posix.dirname(parent);
  if (root === '.' || root === '/') return [];
  const found = new Set<string>();
  for (const base of bases)
    for (const other of subdirs(`${base}/${root}`)) {
      const sibling = `${root}/${other}`;
      if (sibling !== parent && existsSync(`${base}/${sibling}/${id}`)) found.add(sibling);
    }
  return [...found].sort();
}

/** How long killAll() and remove() keep trying before giving up. */
export const CGROUP_SETTLE_MS = 5_000;

// cgroupfs reads and writes are in-kernel bookkeeping that does not block on I/O: they are done
// synchronously, which costs microseconds where a thread-pool round trip per file costs far more.

/** Reads a cgroup file; null when absent. */
export function readOptional(path: string): string | null {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return null;
  }
}

/** The integer value of `key` in a flat-keyed cgroup file (`key value` lines); null if absent. */
export function keyedValue(text: string | null, key: string): number | null {
  if (text === null) return null;
  for (const line of text.split('\n')) {
    const [k, v] = line.trim().split(/\s+/);
    if (k === key && v !== undefined) return Number(v);
  }
  return null;
}

/** The pids listed in `cgroup.procs` files (missing files count as empty). */
export function procsOf(files: readonly string[]): number[] {
  const pids = new Set<number>();
  for (const file of files) {
    const text = readOptional(file);
    for (const line of (text ?? '').split('\n')) if (line) pids.add(Number(line));
  }
  return [...pids];
}

/** SIGKILLs each pid; ones already gone are fine. */
export function killPids(pids: readonly number[]): void {
  for (const pid of pids) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // ESRCH: exited meanwhile.
    }
  }
}

/**
 * Kills until `cgroup.procs` stays empty: new children of a process not yet killed are caught on
 * the next pass (the pids limit bounds how many there can be).
 */
export async function killUntilEmpty(files: readonly string[]): Promise<void> {
  const deadline = Date.now() + CGROUP_SETTLE_MS;
  for (;;) {
    const pids = procsOf(files);
    if (pids.length === 0) return;
    if (Date.now() > deadline) {
      throw new Error(`processes ${pids.join(', ')} survive SIGKILL in ${files.join(', ')}`);
    }
    killPids(pids);
    await sleep(1);
  }
}

/**
 * Removes directories, retrying while the kernel still reports them busy (a process that has
 * just exited can hold its cgroup for a moment).
 */
export async function removeDirs(dirs: readonly string[]): Promise<void> {
  const deadline = Date.now() + CGROUP_SETTLE_MS;
  for (const dir of dirs) {
    for (let wait = 0.2; ; wait = Math.min(wait * 2, 10)) {
      try {
        rmdirSync(dir);
        break;
      } catch (err) {
        const code = (err as NodeJS.ErrnoException).code;
        if (code === 'ENOENT') break;
        if (code !== 'EBUSY' || Date.now() > deadline) throw err;
        await sleep(wait);
      }
    }
  }
}

/** Makes `<base>/<parent>` and `<base>/<parent>/<id>`; the latter must not exist. */
export function makeRunDir(base: string, parent: string, id: string): string {
  mkdirSync(`${base}/${parent}`, { recursive: true });
  const dir = `${base}/${parent}/${id}`;
  mkdirSync(dir);
  return dir;
}

/** Names of the subdirectories of `dir` (none if it does not exist). */
export function subdirs(dir: string): string[] {
  try {
    return readdirSync(dir, { withFileTypes: true })
      .filter((e) => e.isDirectory())
      .map((e) => e.name);
  } catch {
    return [];
  }
}

/** Removes a directory if it is empty; anything else (absent, busy, not empty) is fine. */
export function rmdirQuietly(dir: string): void {
  try {
    rmdirSync(dir);
  } catch {
    // Not empty or gone.
  }
}

/** Writes one value to a cgroup control file. */
export function writeControl(path: string, value: string): void {
  writeFileSync(path, value);
}

/**
 * Whether a control file that only some kernels or configurations have (`cgroup.kill`,
 * `memory.swap.max`) exists in a tree's run cgroups. Every run cgroup of a tree has the same
 * files, so it is asked of the first run directory that has `proof` (a file showing the controller
 * is enabled there) and remembered for the life of the tree's {@link Cgroups}.
 */
export class OptionalControl {
  private known: boolean | undefined;

  constructor(
    private readonly name: string,
    private readonly proof: string,
  ) {}

  /** The control file's path in the run directory `dir`, or null when this tree has none. */
  in(dir: string): string | null {
    if (this.known === undefined) {
      const present = existsSync(`${dir}/${this.name}`);
      // Absent from a directory without the proof says nothing (gone, or controller not on yet).
      if (present || existsSync(`${dir}/${this.proof}`)) this.known = present;
      else return null;
    }
    return this.known ? `${dir}/${this.name}` : null;
  }
}
