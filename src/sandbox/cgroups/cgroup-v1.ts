import { chownSync, existsSync, renameSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import {
  CGROUP_SETTLE_MS,
  keyedValue,
  killPids,
  killUntilEmpty,
  makeRunDir,
  OptionalControl,
  procsOf,
  readOptional,
  removeDirs,
  rmdirQuietly,
  subdirs,
  writeControl,
  siblingParentsHolding,
} from './cgroups.js';
import type { Cgroups, HostUser, RunCgroup } from './cgroups.js';
import type { SandboxLimits } from '../sandbox.js';

/** The v1 controllers a run uses: the first three are required. */
export const V1_CONTROLLERS = ['memory', 'cpu', 'pids', 'freezer', 'cpuacct'] as const;
export type V1Controller = (typeof V1_CONTROLLERS)[number];

/** CFS period for the CPU quota: 100 ms, the kernel's default. */
const CFS_PERIOD_US = 100_000;

/**
 * cgroup v1: each controller is its own hierarchy (some may share a mount, e.g. `cpu,cpuacct`).
 * A run gets `<mount>/<parent>/<id>` in every hierarchy. v1 has no `cgroup.kill`, so a kill
 * freezes the run (when the freezer is mounted), SIGKILLs every process, thaws, and repeats until
 * the cgroup is empty.
 */
export class CgroupV1 implements Cgroups {
  readonly description: string;
  readonly ownerCanJoin = true;
  readonly canRename = true;
  private readonly mounts: string[];
  /** Exists only with swap accounting. */
  private readonly memsw = new OptionalControl(
    'memory.memsw.limit_in_bytes',
    'memory.limit_in_bytes',
  );

  /** @param controllers the mount point of each controller found (memory, cpu and pids at least). */
  constructor(
    private readonly controllers: Partial<Record<V1Controller, string>>,
    private readonly parent: string,
  ) {
    this.mounts = [...new Set(Object.values(controllers))];
    this.description = `cgroup v1 (${Object.keys(controllers).join(', ')})`;
  }

  create(id: string, owner: HostUser | null): RunCgroup {
    const made: string[] = [];
    try {
      for (const mount of this.mounts) made.push(makeRunDir(mount, this.parent, id));
      const run = this.existing(id);
      // v1 lets a process move itself into a cgroup whose cgroup.procs it may write.
      if (owner !== null) {
        for (const file of run.procsFiles) chownSync(file, owner.uid, owner.gid);
      }
      return run;
    } catch (err) {
      removeDirs(made).catch(() => undefined);
      throw err;
    }
  }

  existing(id: string): RunCgroupV1 {
    return new RunCgroupV1(id, this.controllers, this.parent, this.memsw);
  }

  leftByOthers(id: string): RunCgroupV1[] {
    return siblingParentsHolding(this.mounts, this.parent, id).map(
      (parent) => new RunCgroupV1(id, this.controllers, parent, this.memsw),
    );
  }

  removeParentIfEmpty(): void {
    for (const mount of this.mounts) rmdirQuietly(`${mount}/${this.parent}`);
  }

  parentDirs(): string[] {
    return this.mounts.map((mount) => `${mount}/${this.parent}`);
  }

  list(): string[] {
    const ids = new Set<string>();
    for (const mount of this.mounts) {
      for (const id of subdirs(`${mount}/${this.parent}`)) ids.add(id);
    }
    return [...ids].sort();
  }
}

class RunCgroupV1 implements RunCgroup {
  readonly procsFiles: string[];
  private readonly dirs: string[];

  constructor(
    readonly id: string,
    private readonly controllers: Partial<Record<V1Controller, string>>,
    private readonly parent: string,
    private readonly memsw: OptionalControl,
  ) {
    this.dirs = [...new Set(Object.values(controllers))].map((m) => `${m}/${parent}/${id}`);
    this.procsFiles = this.dirs.map((d) => `${d}/cgroup.procs`);
  }

  /** This run's directory in the hierarchy of `controller`. */
  dir(controller: V1Controller): string {
    const mount = this.controllers[controller];
    if (mount === undefined) throw new Error(`cgroup controller ${controller} is not mounted`);
    return `${mount}/${this.parent}/${this.id}`;
  }

  setLimits(limits: SandboxLimits): void {
    const memory = this.dir('memory');
    writeControl(`${memory}/memory.limit_in_bytes`, String(limits.memoryBytes));
    // memsw exists only with swap accounting; it must be set after (and ≥) the plain limit.
    const memsw = this.memsw.in(memory);
    if (memsw !== null) writeControl(memsw, String(limits.memoryBytes));
    const cpu = this.dir('cpu');
    const quota = Math.max(1000, Math.round(limits.cpus * CFS_PERIOD_US));
    writeControl(`${cpu}/cpu.cfs_period_us`, String(CFS_PERIOD_US));
    writeControl(`${cpu}/cpu.cfs_quota_us`, String(quota));
    writeControl(`${this.dir('pids')}/pids.max`, String(limits.pids));
  }

  renameTo(id: string): RunCgroup {
    const renamed: [string, string][] = [];
    try {
      for (const mount of new Set(Object.values(this.controllers))) {
        const from = `${mount}/${this.parent}/${this.id}`;
        const to = `${mount}/${this.parent}/${id}`;
        // rename(2) replaces an empty directory; a cgroup of that name must not be replaced.
        if (existsSync(to)) throw Object.assign(new Error(`${to} exists`), { code: 'EEXIST' });
        renameSync(from, to);
        renamed.push([from, to]);
      }
    } catch (err) {
      for (const [from, to] of renamed.reverse()) {
        try {
          renameSync(to, from);
        } catch {
          // Leave it for reapOrphans().
        }
      }
      throw err;
    }
    return new RunCgroupV1(id, this.controllers, this.parent, this.memsw);
  }

  async killAll(): Promise<void> {
    if (procsOf(this.procsFiles).length === 0) return;
    const state =
      this.controllers.freezer === undefined ? null : `${this.dir('freezer')}/freezer.state`;
    if (state !== null && existsSync(state)) {
      // Frozen processes cannot fork, so one pass finds them all; they die when thawed.
      try {
        writeControl(state, 'FROZEN');
        const deadline = Date.now() + CGROUP_SETTLE_MS;
        while (readOptional(state)?.trim() === 'FREEZING' && Date.now() < deadline) {
          await sleep(1);
        }
        killPids(procsOf(this.procsFiles));
      } finally {
        try {
          writeControl(state, 'THAWED');
        } catch {
          // The cgroup is gone.
        }
      }
    }
    await killUntilEmpty(this.procsFiles);
  }

  usage(): { maxMemoryBytes: number | null; cpuMs: number | null } {
    const memory = readOptional(`${this.dir('memory')}/memory.max_usage_in_bytes`);
    const cpu =
      this.controllers.cpuacct === undefined
        ? null
        : readOptional(`${this.dir('cpuacct')}/cpuacct.usage`);
    return {
      maxMemoryBytes: memory === null ? null : Number(memory),
      cpuMs: cpu === null ? null : Math.round(Number(cpu) / 1e6),
    };
  }

  limitHit(): 'memory' | 'pids' | null {
    const oomControl = readOptional(`${this.dir('memory')}/memory.oom_control`);
    const oom = keyedValue(oomControl, 'oom_kill');
    if (oom !== null && oom > 0) return 'memory';
    const max = keyedValue(readOptional(`${this.dir('pids')}/pids.events`), 'max');
    if (max !== null && max > 0) return 'pids';
    return null;
  }

  async remove(): Promise<void> {
    await removeDirs(this.dirs);
  }
}
