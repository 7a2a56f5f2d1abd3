import { bareBwrapArgs } from './bwrap-args.js';
import type { HostLayout } from './bwrap-args.js';
import type { HostUser, RunCgroup } from './cgroups.js';
import type { SandboxSpec } from './sandbox.js';

/**
 * The shell that starts a confined process, on the host: no core dumps, bounded file size, join
 * each cgroup (so bubblewrap and all it forks are inside from the start), then exec the rest.
 */
const JOIN_SCRIPT = `ulimit -c 0 && ulimit -f "$1" || exit 125
shift
while [ "$1" != -- ]; do echo $$ >"$1" || exit 125; shift; done
shift
exec "$@"`;

/** What a confined process needs of a spec: everything of a run but its I/O. */
export type ConfinedSpec = Pick<
  SandboxSpec,
  'id' | 'argv' | 'env' | 'workspace' | 'readOnlyMounts' | 'limits' | 'egressSocket'
>;

/**
 * A long-lived sandboxed process the caller spawns and talks to itself: spawn `file` with `args`
 * as `user`, with the seccomp filter as descriptor 3. `release()` kills everything left in its
 * cgroup and removes it.
 */
export interface ConfinedCommand {
  file: string;
  args: string[];
  seccompPath: string;
  user: HostUser | null;
  /** Peak memory and CPU time so far, and which limit (if any) the process hit. */
  usage(): { maxMemoryBytes: number | null; cpuMs: number | null; limitHit: string | null };
  /** Kills what is left in the cgroup and removes it. Safe to repeat. */
  release(): Promise<void>;
}

/** The command line of a confined process: the join shell, then (setpriv and) bubblewrap. */
export function confinedArgs(
  spec: ConfinedSpec,
  layout: HostLayout,
  o: {
    cgroup: RunCgroup;
    bwrap: string;
    dropPrivileges: readonly string[];
    maxFileBytes: number;
  },
): { file: string; args: string[] } {
  return {
    file: '/bin/sh',
    args: [
      '-c',
      JOIN_SCRIPT,
      'gatehouse-confined',
      String(Math.ceil(o.maxFileBytes / 512)),
      ...o.cgroup.procsFiles,
      '--',
      ...o.dropPrivileges,
      o.bwrap,
      ...bareBwrapArgs(spec, layout),
    ],
  };
}
