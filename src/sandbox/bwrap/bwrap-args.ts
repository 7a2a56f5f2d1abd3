import { SPAWN_FD } from '../spawner/spawner-protocol.js';
import type { SandboxSpec } from '../sandbox.js';

/** The user and group the program runs as inside the sandbox (`nobody`). */
export const SANDBOX_ID_INSIDE = 65534;
/** Where the spec's workspace is mounted, and the program's working directory. */
export const WORKSPACE = '/workspace';
/** Where the egress proxy's socket is mounted. */
export const EGRESS_SOCKET = '/run/gatehouse/egress.sock';
/** The proxy address programs see when the sandbox has egress. */
export const EGRESS_PROXY_URL = 'http://127.0.0.1:3128';
/** PATH of the program when the spec's env does not give one. */
export const DEFAULT_PATH = '/usr/local/bin:/usr/bin:/bin:/usr/local/sbin:/usr/sbin:/sbin';

/**
 * What of the host's /etc programs need: names, dynamic linking, CA certificates (Debian's and
 * Red Hat's places), time zone, alternatives (Debian's symlinks for awk, editor…). Nothing else:
 * each bind costs a mount on every run.
 */
const ETC_FILES = [
  'passwd',
  'group',
  'nsswitch.conf',
  'hosts',
  'services',
  'protocols',
  'ld.so.cache',
  'localtime',
  'alternatives',
  'ssl/certs',
  'ssl/openssl.cnf',
  'pki/tls/certs',
  'os-release',
  'gitconfig',
];

/**
 * The descriptor on which a shell that runs before the program (the egress forwarder's) says the
 * program was never exec'd: a copy of the slot's status pipe, put where the slot's line pipe was
 * (read and closed by then). The shell closes it for the program and for socat, so nothing that
 * runs after the exec can write there; a cold run's line passes it only to such a shell.
 */
export const NOT_STARTED_FD = SPAWN_FD.LINE;
/** What that shell writes on {@link NOT_STARTED_FD}, a line of its own among bubblewrap's status. */
export const NOT_STARTED_MARK = 'gatehouse: not started';

/**
 * A shell function, `gatehouse_program NAME PATH`: whether NAME (looked up on PATH when it has
 * no slash, as execvp does) is an executable regular file. When not, it says why in bubblewrap's
 * words for a failed exec (so every way of starting a program reports it alike) and returns 127
 * (not found) or 126 (found, not executable). `command -v` would also accept shell builtins and
 * functions, which exec cannot run. Leaves IFS unset (its default) and globbing on.
 */
export const PROGRAM_CHECK_FUNCTION = `gatehouse_program() {
  _denied=
  case $1 in
  */*)
    [ -f "$1" ] && [ -x "$1" ] && return 0
    [ -e "$1" ] && _denied=1 ;;
  *)
    set -f
    IFS=:
    for _dir in $2; do
      [ -f "\${_dir:-.}/$1" ] || continue
      [ -x "\${_dir:-.}/$1" ] && { unset IFS; set +f; return 0; }
      _denied=1
    done
    unset IFS
    set +f ;;
  esac
  if [ -n "$_denied" ]; then
    echo "bwrap: execvp $1: Permission denied" >&2
    return 126
  fi
  echo "bwrap: execvp $1: No such file or directory" >&2
  return 127
}`;

/**
 * Inside the sandbox, before the program: a forwarder from 127.0.0.1:3128 to the egress proxy's
 * socket, wait (polling /proc/net/tcp, up to 5 s) until it listens, then exec the program.
 * 0100007F:0C38 is 127.0.0.1:3128 and 0A is LISTEN. socat never holds {@link NOT_STARTED_FD}.
 */
export const START_FORWARDER_SCRIPT = `/usr/bin/socat TCP-LISTEN:3128,bind=127.0.0.1,fork,reuseaddr UNIX-CONNECT:${EGRESS_SOCKET} </dev/null >/dev/null 2>&1 ${NOT_STARTED_FD}>&- &
forwarder=$!
i=0
while :; do
  while read -r _ local _ state _; do
    [ "$local" = 0100007F:0C38 ] && [ "$state" = 0A ] && break 2
  done </proc/net/tcp
  i=$((i + 1))
  if [ "$i" -gt 1000 ] || ! kill -0 "$forwarder" 2>/dev/null; then
    echo 'gatehouse: the egress forwarder did not start' >&2
    exit 125
  fi
  /bin/sleep 0.005
done`;

/**
 * The egress forwarder's shell, which bubblewrap execs in place of the program: start the
 * forwarder, check the program can be exec'd, then exec it. With `report`, every way this shell
 * ends other than that exec (the forwarder did not start, the program is missing or not
 * executable, or an exec that failed anyway: dash runs the EXIT trap then, with the descriptor
 * restored) writes {@link NOT_STARTED_MARK} on {@link NOT_STARTED_FD} first: bubblewrap's status
 * says the shell ran, which is not the program. The program itself never gets that descriptor.
 */
function egressForwarder(report: boolean): string {
  return [
    ...(report ? [`trap 'echo "${NOT_STARTED_MARK}" >&${NOT_STARTED_FD}' EXIT`] : []),
    START_FORWARDER_SCRIPT,
    PROGRAM_CHECK_FUNCTION,
    'gatehouse_program "$1" "$PATH" || exit',
    `exec "$@"${report ? ` ${NOT_STARTED_FD}>&-` : ''}`,
  ].join('\n');
}

/** How the host lays out the top-level directories of a merged /usr (symlinks) or not. */
export interface HostLayout {
  /** For each of bin, sbin, lib, lib64…: the symlink target if it is one, else null. */
  topLinks: Record<string, string | null>;
}

/** The environment the program sees: the spec's, a PATH, and with egress the proxy variables. */
export function sandboxEnv(
  spec: Pick<SandboxSpec, 'env' | 'egressSocket'>,
): Record<string, string> {
  const env: Record<string, string> = { ...spec.env };
  env.PATH ??= DEFAULT_PATH;
  if (spec.egressSocket !== null) {
    for (const name of ['NO_PROXY', 'no_proxy']) delete env[name];
    for (const name of ['HTTP_PROXY', 'HTTPS_PROXY', 'http_proxy', 'https_proxy']) {
      env[name] = EGRESS_PROXY_URL;
    }
  }
  return env;
}

/**
 * bubblewrap's options for a run (not `bwrap`, `--` or the command): new user, pid, mount, ipc,
 * uts, network and cgroup namespaces; `nobody` inside, no capabilities, no new privileges
 * (bubblewrap always sets it), no further user namespaces; the system read-only; writable binds
 * of the workspace and the spec's writable mounts only; a private /tmp, /proc and minimal /dev;
 * the spec's files in the private root; the root remounted read-only; the seccomp filter and the JSON status on the given fds.
 */
export function bwrapOptions(
  spec: Pick<
    SandboxSpec,
    'env' | 'workspace' | 'readOnlyMounts' | 'writableMounts' | 'files' | 'limits' | 'egressSocket'
  >,
  layout: HostLayout,
  fds: { seccomp: number; status: number | null; firstFile: number },
): string[] {
  const args = [
    '--unshare-all',
    '--unshare-user',
    '--disable-userns',
    '--uid',
    String(SANDBOX_ID_INSIDE),
    '--gid',
    String(SANDBOX_ID_INSIDE),
    '--hostname',
    'gatehouse',
    '--die-with-parent',
    '--new-session',
    '--cap-drop',
    'ALL',
    '--clearenv',
  ];
  for (const [name, value] of Object.entries(sandboxEnv(spec))) args.push('--setenv', name, value);
  args.push('--ro-bind', '/usr', '/usr');
  for (const [name, target] of Object.entries(layout.topLinks)) {
    if (target === null) args.push('--ro-bind-try', `/${name}`, `/${name}`);
    else args.push('--symlink', target, `/${name}`);
  }
  for (const name of ETC_FILES) args.push('--ro-bind-try', `/etc/${name}`, `/etc/${name}`);
  args.push('--proc', '/proc', '--dev', '/dev');
  args.push('--perms', '1777', '--size', String(spec.limits.memoryBytes), '--tmpfs', '/tmp');
  args.push('--bind', spec.workspace, WORKSPACE);
  for (const m of spec.readOnlyMounts) args.push('--ro-bind', m.host, m.sandbox);
  for (const m of spec.writableMounts ?? []) args.push('--bind', m.host, m.sandbox);
  if (spec.egressSocket !== null) args.push('--ro-bind', spec.egressSocket, EGRESS_SOCKET);
  (spec.files ?? []).forEach((file, i) => {
    args.push('--perms', file.mode.toString(8), '--file', String(fds.firstFile + i), file.path);
  });
  args.push('--remount-ro', '/', '--chdir', WORKSPACE, '--seccomp', String(fds.seccomp));
  if (fds.status !== null) args.push('--json-status-fd', String(fds.status));
  return args;
}

/**
 * The command bubblewrap execs: the spec's argv, behind the egress forwarder when it has egress.
 * `reportNotStarted`: the forwarder says on {@link NOT_STARTED_FD} when it ends without exec'ing
 * the program (the caller must give it that descriptor: see {@link slotCommandLine}).
 */
export function sandboxCommand(
  spec: Pick<SandboxSpec, 'argv' | 'egressSocket'>,
  reportNotStarted = false,
): string[] {
  return spec.egressSocket === null
    ? spec.argv
    : ['/bin/sh', '-c', egressForwarder(reportNotStarted), 'gatehouse-egress', ...spec.argv];
}

/**
 * For benchmarks: bubblewrap's arguments for `spec` with the same flags as a sandbox run, to spawn
 * directly (no spawner, no cgroup). The caller passes the seccomp filter as descriptor 3.
 */
export function bareBwrapArgs(
  spec: Pick<
    SandboxSpec,
    'argv' | 'env' | 'workspace' | 'readOnlyMounts' | 'limits' | 'egressSocket'
  >,
  layout: HostLayout,
): string[] {
  const options = bwrapOptions({ ...spec, files: [] }, layout, {
    seccomp: 3,
    status: null,
    firstFile: 4,
  });
  return [...options, '--', ...sandboxCommand(spec)];
}

/**
 * Quotes a word for a POSIX shell command line that must stay on one line: single quotes, with
 * `'` as `'\''` and a newline as `'"$nl"'` (the slot shell defines `nl`). The shell that reads it
 * runs outside the sandbox, so this is the only quoting used and it has a test of its own.
 */
export function shellQuote(word: string): string {
  return `'${word.replaceAll("'", `'\\''`).replaceAll('\n', `'"$nl"'`)}'`;
}

/**
 * The line a slot's shell evals: close the descriptors bubblewrap must not inherit, then exec
 * `prefix` (e.g. setpriv), bubblewrap with its options from OPTIONS, and the command. With
 * `notStartedFd`, that descriptor becomes a copy of the status pipe (after the closes), for a
 * command from {@link sandboxCommand} that reports not started.
 */
export function slotCommandLine(
  prefix: readonly string[],
  bwrap: string,
  closeFds: readonly number[],
  command: readonly string[],
  notStartedFd: number | null = null,
): string {
  const closes = [
    ...closeFds.map((fd) => `${fd}<&-`),
    ...(notStartedFd === null ? [] : [`${notStartedFd}>&${SPAWN_FD.STATUS}`]),
  ].join(' ');
  const words = [...prefix, bwrap].map(shellQuote).join(' ');
  return `exec ${closes} ${words} --args ${SPAWN_FD.OPTIONS} -- ${command.map(shellQuote).join(' ')}`;
}

/** bubblewrap's options in its `--args FD` format: each NUL-terminated. */
export function packBwrapOptions(options: readonly string[]): Buffer {
  return Buffer.from(options.map((o) => `${o}\0`).join(''));
}
