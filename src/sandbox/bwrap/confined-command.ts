import { bwrapOptions, packBwrapOptions, sandboxCommand } from './bwrap-args.js';
import type { HostLayout } from './bwrap-args.js';
import type { HostUser, RunCgroup } from '../cgroups/cgroups.js';
import type { SandboxSpec } from '../sandbox.js';

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
  | 'id'
  | 'argv'
  | 'env'
  | 'workspace'
  | 'readOnlyMounts'
  | 'writableMounts'
  | 'limits'
  | 'egressSocket'
>;

/** The descriptor the caller gives the seccomp filter on. */
const CONFINED_SECCOMP_FD = 3;
/** The descriptor the caller gives `options` on, as a pipe (bubblewrap's `--args`). */
const CONFINED_OPTIONS_FD = 4;

/**
 * A long-lived sandboxed process the caller spawns and talks to itself: spawn `file` with `args`
 * as `user`, with the seccomp filter as descriptor 3 and a pipe holding `options` as descriptor 4.
 * `release()` kills everything left in its cgroup and removes it.
 */
export interface ConfinedCommand {
  file: string;
  /** No environment values in here: the command line of a process is readable by every user. */
  args: string[];
  /** bubblewrap's options, NUL-separated (its `--args` format), environment values included. */
  options: Buffer;
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
): { file: string; args: string[]; options: Buffer } {
  const options = bwrapOptions({ ...spec, files: [] }, layout, {
    seccomp: CONFINED_SECCOMP_FD,
    status: null,
    firstFile: CONFINED_OPTIONS_FD + 1,
  });
  return {
    file: '/bin/sh',
    options: packBwrapOptions(options),
    args: [
      '-c',
      JOIN_SCRIPT,
      'gatehouse-confined',
      String(Math.ceil(o.maxFileBytes / 512)),
      ...o.cgroup.procsFiles,
      '--',
      ...o.dropPrivileges,
      o.bwrap,
      '--args',
      String(CONFINED_OPTIONS_FD),
      '--',
      ...sandboxCommand(spec),
    ],
  };
}
