import { mkdir, readFile } from 'node:fs/promises';
import { CgroupV1, V1_CONTROLLERS } from './cgroup-v1.js';
import type { V1Controller } from './cgroup-v1.js';
import { CgroupV2, usableV2 } from './cgroup-v2.js';
import type { Cgroups } from './cgroups.js';

/** Where gateways keep their runs' cgroups, under each hierarchy's root (one subdirectory each). */
export const DEFAULT_CGROUP_PARENT = 'gatehouse';

/**
 * Finds the cgroup hierarchies under `root` that can hold sandbox runs: cgroup v1 when its
 * memory, cpu and pids controllers are mounted (as on Debian hosts without systemd), else a v2
 * tree at `root` or `root/unified` whose memory, cpu and pids controllers are available.
 * Makes `<hierarchy>/<parent>` to prove it may.
 * @returns the hierarchies, or a sentence saying why none can be used.
 */
export async function detectCgroups(root: string, parent: string): Promise<Cgroups | string> {
  const v1 = await v1Mounts(root);
  let cgroups: Cgroups | null = null;
  let bases: string[] = [];
  if (v1.memory !== undefined && v1.cpu !== undefined && v1.pids !== undefined) {
    cgroups = new CgroupV1(v1, parent);
    bases = [...new Set(Object.values(v1))];
  } else {
    for (const base of [root, `${root}/unified`]) {
      if (usableV2(base)) {
        cgroups = new CgroupV2(base, parent);
        bases = [base];
        break;
      }
    }
  }
  if (cgroups === null) {
    return `No usable cgroups under ${root}: neither cgroup v1 memory, cpu and pids controllers nor a cgroup v2 tree with them.`;
  }
  for (const base of bases) {
    try {
      await mkdir(`${base}/${parent}`, { recursive: true });
    } catch (err) {
      return `Cannot create cgroups under ${base} (${(err as NodeJS.ErrnoException).code ?? String(err)}); the gateway must run as root or be given a delegated cgroup.`;
    }
  }
  return cgroups;
}

/** The mount point of each v1 controller whose mount lies under `root`, from mountinfo. */
async function v1Mounts(root: string): Promise<Partial<Record<V1Controller, string>>> {
  const found: Partial<Record<V1Controller, string>> = {};
  let mountinfo: string;
  try {
    mountinfo = await readFile('/proc/self/mountinfo', 'utf8');
  } catch {
    return found;
  }
  for (const line of mountinfo.split('\n')) {
    // "<id> <parent> <dev> <root> <mount point> <options> [optional…] - <type> <source> <super options>"
    const [left, right] = line.split(' - ');
    if (left === undefined || right === undefined) continue;
    const mountPoint = unescapeMount(left.split(' ')[4] ?? '');
    const [type, , superOptions] = right.split(' ');
    if (type !== 'cgroup' || !(mountPoint === root || mountPoint.startsWith(`${root}/`))) continue;
    const options = (superOptions ?? '').split(',');
    for (const controller of V1_CONTROLLERS) {
      if (options.includes(controller) && found[controller] === undefined) {
        found[controller] = mountPoint;
      }
    }
  }
  return found;
}

/** mountinfo escapes space, tab, newline and backslash as octal. */
function unescapeMount(s: string): string {
  return s.replace(/\\([0-7]{3})/g, (_, oct: string) => String.fromCharCode(parseInt(oct, 8)));
}
