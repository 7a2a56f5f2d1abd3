import { access, chown, rename } from 'node:fs/promises';
import { setTimeout as sleep } from 'node:timers/promises';
import {
  CGROUP_SETTLE_MS,
  keyedValue,
  killPids,
  killUntilEmpty,
  makeRunDir,
  procsOf,
  readOptional,
  removeDirs,
  subdirs,
  writeControl,
} from './cgroups.js';
import type { Cgroups, HostUser, RunCgroup } from './cgroups.js';
import type { SandboxLimits } from './sandbox.js';

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

  /** @param controllers the mount point of each controller found (memory, cpu and pids at least). */
  constructor(
    private readonly controllers: Partial<Record<V1Controller, string>>,
    private readonly parent: string,
  ) {
    this.mounts = [...new Set(Object.values(controllers))];
    this.description = `cgroup v1 (${Object.keys(controllers).join(', ')})`;
  }

  async create(id: string, owner: HostUser | null): Promise<RunCgroup> {
    const made: string[] = [];
    try {
      for (const mount of this.mounts) made.push(await makeRunDir(mount, this.parent, id));
      const run = this.existing(id);
      // v1 lets a process move itself into a cgroup whose cgroup.procs it may write.
      if (owner !== null) {
        for (const file of run.procsFiles) await chown(file, owner.uid, owner.gid);
      }
      return run;
    } catch (err) {
      await removeDirs(made).catch(() => undefined);
      throw err;
    }
  }

  existing(id: string): RunCgroupV1 {
    return new RunCgroupV1(id, this.controllers, this.parent);
  }

  async list(): Promise<string[]> {
    const ids = new Set<string>();
    for (const mount of this.mounts) {
      for (const id of await subdirs(`${mount}/${this.parent}`)) ids.add(id);
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

  async setLimits(limits: SandboxLimits): Promise<void> {
    const memory = this.dir('memory');
    await writeControl(`${memory}/memory.limit_in_bytes`, String(limits.memoryBytes));
    // memsw exists only with swap accounting; it must be set after (and ≥) the plain limit.
    if (await exists(`${memory}/memory.memsw.limit_in_bytes`)) {
      await writeControl(`${memory}/memory.memsw.limit_in_bytes`, String(limits.memoryBytes));
    }
    const cpu = this.dir('cpu');
    const quota = Math.max(1000, Math.round(limits.cpus * CFS_PERIOD_US));
    await writeControl(`${cpu}/cpu.cfs_period_us`, String(CFS_PERIOD_US));
    await writeControl(`${cpu}/cpu.cfs_quota_us`, String(quota));
    await writeControl(`${this.dir('pids')}/pids.max`, String(limits.pids));
  }

  async renameTo(id: string): Promise<RunCgroup> {
    const renamed: [string, string][] = [];
    try {
      for (const mount of new Set(Object.values(this.controllers))) {
        const from = `${mount}/${this.parent}/${this.id}`;
        const to = `${mount}/${this.parent}/${id}`;
        // rename(2) replaces an empty directory; a cgroup of that name must not be replaced.
        if (await exists(to)) throw Object.assign(new Error(`${to} exists`), { code: 'EEXIST' });
        await rename(from, to);
        renamed.push([from, to]);
      }
    } catch (err) {
      for (const [from, to] of renamed) await rename(to, from).catch(() => undefined);
      throw err;
    }
    return new RunCgroupV1(id, this.controllers, this.parent);
  }

  async killAll(): Promise<void> {
    if ((await procsOf(this.procsFiles)).length === 0) return;
    if (this.controllers.freezer !== undefined) {
      // Frozen processes cannot fork, so one pass finds them all; they die when thawed.
      const state = `${this.dir('freezer')}/freezer.state`;
      try {
        await writeControl(state, 'FROZEN');
        const deadline = Date.now() + CGROUP_SETTLE_MS;
        while ((await readOptional(state))?.trim() === 'FREEZING' && Date.now() < deadline) {
          await sleep(1);
        }
        killPids(await procsOf(this.procsFiles));
      } finally {
        await writeControl(state, 'THAWED').catch(() => undefined);
      }
    }
    await killUntilEmpty(this.procsFiles);
  }

  async usage(): Promise<{ maxMemoryBytes: number | null; cpuMs: number | null }> {
    const memory = await readOptional(`${this.dir('memory')}/memory.max_usage_in_bytes`);
    const cpu =
      this.controllers.cpuacct === undefined
        ? null
        : await readOptional(`${this.dir('cpuacct')}/cpuacct.usage`);
    return {
      maxMemoryBytes: memory === null ? null : Number(memory),
      cpuMs: cpu === null ? null : Math.round(Number(cpu) / 1e6),
    };
  }

  async limitHit(): Promise<'memory' | 'pids' | null> {
    const oomControl = await readOptional(`${this.dir('memory')}/memory.oom_control`);
    const oom = keyedValue(oomControl, 'oom_kill');
    if (oom !== null && oom > 0) return 'memory';
    const max = keyedValue(await readOptional(`${this.dir('pids')}/pids.events`), 'max');
    if (max !== null && max > 0) return 'pids';
    return null;
  }

  async remove(): Promise<void> {
    await removeDirs(this.dirs);
  }
}

async function exists(path: string): Promise<boolean> {
  try {
    await access(path);
    return true;
  } catch {
    return false;
  }
}
