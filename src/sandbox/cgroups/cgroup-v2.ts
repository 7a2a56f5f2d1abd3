import {
  keyedValue,
  killUntilEmpty,
  makeRunDir,
  OptionalControl,
  readOptional,
  removeDirs,
  rmdirQuietly,
  subdirs,
  writeControl,
  siblingParentsHolding,
} from './cgroups.js';
import type { Cgroups, RunCgroup } from './cgroups.js';
import type { SandboxLimits } from '../sandbox.js';

const CPU_PERIOD_US = 100_000;

/**
 * cgroup v2: one unified tree; a run gets `<base>/<parent>/<id>`, with the memory, cpu and pids
 * controllers enabled for the children of `<base>` and of `<base>/<parent>`. Killing uses
 * `cgroup.kill` (Linux 5.14+), then SIGKILL passes until the cgroup is empty.
 */
export class CgroupV2 implements Cgroups {
  readonly description: string;
  readonly ownerCanJoin = false;
  readonly canRename = false;
  private readonly controls = {
    swapMax: new OptionalControl('memory.swap.max', 'memory.max'),
    kill: new OptionalControl('cgroup.kill', 'cgroup.procs'),
  };

  constructor(
    private readonly base: string,
    private readonly parent: string,
  ) {
    this.description = `cgroup v2 at ${base}`;
  }

  create(id: string): RunCgroup {
    enableControllers(this.base);
    const dir = makeRunDir(this.base, this.parent, id);
    try {
      enableControllers(`${this.base}/${this.parent}`);
      return this.existing(id);
    } catch (err) {
      removeDirs([dir]).catch(() => undefined);
      throw err;
    }
  }

  existing(id: string): RunCgroup {
    return new RunCgroupV2(id, `${this.base}/${this.parent}/${id}`, this.controls);
  }

  leftByOthers(id: string): RunCgroup[] {
    return siblingParentsHolding([this.base], this.parent, id).map(
      (parent) => new RunCgroupV2(id, `${this.base}/${parent}/${id}`, this.controls),
    );
  }

  removeParentIfEmpty(): void {
    rmdirQuietly(`${this.base}/${this.parent}`);
  }

  parentDirs(): string[] {
    return [`${this.base}/${this.parent}`];
  }

  list(): string[] {
    return subdirs(`${this.base}/${this.parent}`).sort();
  }
}

class RunCgroupV2 implements RunCgroup {
  readonly procsFiles: string[];

  constructor(
    readonly id: string,
    private readonly dir: string,
    private readonly controls: { swapMax: OptionalControl; kill: OptionalControl },
  ) {
    this.procsFiles = [`${dir}/cgroup.procs`];
  }

  setLimits(limits: SandboxLimits): void {
    writeControl(`${this.dir}/memory.max`, String(limits.memoryBytes));
    const swapMax = this.controls.swapMax.in(this.dir);
    if (swapMax !== null) writeControl(swapMax, '0');
    const quota = Math.max(1000, Math.round(limits.cpus * CPU_PERIOD_US));
    writeControl(`${this.dir}/cpu.max`, `${quota} ${CPU_PERIOD_US}`);
    writeControl(`${this.dir}/pids.max`, String(limits.pids));
  }

  renameTo(): RunCgroup {
    throw new Error('cgroup v2 directories cannot be renamed');
  }

  async killAll(): Promise<void> {
    const kill = this.controls.kill.in(this.dir);
    if (kill !== null) writeControl(kill, '1');
    await killUntilEmpty(this.procsFiles);
  }

  usage(): { maxMemoryBytes: number | null; cpuMs: number | null } {
    const peak = readOptional(`${this.dir}/memory.peak`);
    const usec = keyedValue(readOptional(`${this.dir}/cpu.stat`), 'usage_usec');
    return {
      maxMemoryBytes: peak === null ? null : Number(peak),
      cpuMs: usec === null ? null : Math.round(usec / 1000),
    };
  }

  limitHit(): 'memory' | 'pids' | null {
    const oom = keyedValue(readOptional(`${this.dir}/memory.events`), 'oom_kill');
    if (oom !== null && oom > 0) return 'memory';
    const max = keyedValue(readOptional(`${this.dir}/pids.events`), 'max');
    if (max !== null && max > 0) return 'pids';
    return null;
  }

  async remove(): Promise<void> {
    await removeDirs([this.dir]);
  }
}

/** Enables memory, cpu and pids for the children of `dir`, unless they already are. */
function enableControllers(dir: string): void {
  const enabled = readOptional(`${dir}/cgroup.subtree_control`) ?? '';
  const missing = ['memory', 'cpu', 'pids'].filter((c) => !enabled.split(/\s+/).includes(c));
  if (missing.length > 0) {
    writeControl(`${dir}/cgroup.subtree_control`, missing.map((c) => `+${c}`).join(' '));
  }
}

/** True when `base` is a v2 tree whose memory, cpu and pids controllers are available. */
export function usableV2(base: string): boolean {
  const available = (readOptional(`${base}/cgroup.controllers`) ?? '').split(/\s+/);
  return ['memory', 'cpu', 'pids'].every((c) => available.includes(c));
}
