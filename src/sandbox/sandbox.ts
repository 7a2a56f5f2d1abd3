/** Hard limits of one sandbox run, enforced by cgroups (and the timeout by the gateway). */
export interface SandboxLimits {
  /** Memory (and memory + swap) limit of the whole run, in bytes. */
  memoryBytes: number;
  /** CPU quota in cores, e.g. 0.5 for half a core. */
  cpus: number;
  /**
   * Maximum number of processes of the run, counting bubblewrap's own two (its monitor and the
   * sandbox's pid 1) and, with egress, the forwarder.
   */
  pids: number;
  /** Wall-clock limit from the spawn; past it every process of the run is killed. */
  timeoutMs: number;
}

/** A file written into the sandbox's private in-memory root, never onto the host disk. */
export interface SandboxFile {
  /** Absolute path inside the sandbox, e.g. `/run/secrets/token`; not under a mount. */
  path: string;
  content: string | Buffer;
  /** Permission bits, e.g. 0o400. The file belongs to the sandbox user. */
  mode: number;
}

/** What to run, with what, and where its output goes. */
export interface SandboxSpec {
  /** Unique per run (a lease id); names the cgroup. Letters, digits, `.`, `_`, `-`. */
  id: string;
  /** Program and arguments; never a shell string built by us. */
  argv: string[];
  /**
   * The entire environment of the program (nothing is inherited from the gateway), plus `PATH`
   * when not given, `PWD=/workspace` (bubblewrap always sets it) and, with egress, the proxy
   * variables (`HTTP_PROXY`, `HTTPS_PROXY` and lower-case; `NO_PROXY` removed).
   */
  env: Record<string, string>;
  /** Host directory bound read-write at `/workspace`, the working directory. */
  workspace: string;
  /**
   * True when `workspace` is an empty directory made for this run alone that nobody reads after
   * it (a call's own lease, not an attempt's or a worktree): a warm sandbox, with an empty
   * workspace of its own, may then stand in for a cold start.
   */
  freshWorkspace?: boolean;
  /**
   * When present, `workspace` does not exist yet: a cold run awaits this first (its failure is
   * the run's: it throws, nothing ran), while a warm sandbox, with an empty workspace of its own,
   * never calls it.
   */
  prepareWorkspace?: () => Promise<void>;
  readOnlyMounts: { host: string; sandbox: string }[];
  /**
   * Host directories bound read-write (after the read-only mounts, so one of those at the same
   * path is made writable): what a long-lived program such as a stdio MCP server was granted.
   */
  writableMounts?: { host: string; sandbox: string }[];
  /** Written into the sandbox's private tmpfs root, e.g. `/run/secrets/x` (credentials). */
  files?: SandboxFile[];
  /** Written to the program's stdin, which is then closed. */
  stdin?: string | Buffer;
  limits: SandboxLimits;
  /** Host path of a Unix socket to the egress proxy, bound into the sandbox; null = no network at all. */
  egressSocket: string | null;
  /** Called with each stdout chunk as it comes; the caller bounds what it keeps. */
  onStdout: (chunk: Buffer) => void;
  /** Called with each stderr chunk as it comes (bubblewrap's own setup errors arrive here too). */
  onStderr: (chunk: Buffer) => void;
  /** Aborting kills every process of the run. */
  signal: AbortSignal;
}

/** Why the sandbox ended a run, when it did. */
export const SandboxKill = {
  timeout: 'timeout',
  memory: 'memory',
  pids: 'pids',
  abort: 'abort',
} as const;
export type SandboxKill = (typeof SandboxKill)[keyof typeof SandboxKill];

/** How a run ended. */
export interface SandboxResult {
  /**
   * The program's exit code as bubblewrap reports it: a program killed by signal n inside the
   * sandbox shows as 128 + n (bubblewrap's convention). Null when bubblewrap itself was killed.
   */
  exitCode: number | null;
  /** The signal that ended bubblewrap itself (a kill of the whole run), else null. */
  signal: string | null;
  /**
   * True once the program was exec'd inside the sandbox (false when setup failed: then nothing
   * ran). A run killed (timeout, abort) after bubblewrap began its setup counts as started,
   * since it cannot be told apart from one killed just after the exec.
   */
  started: boolean;
  /**
   * `timeout` and `abort`: the sandbox killed the run; `memory`: the kernel's OOM killer struck
   * in the run's cgroup; `pids`: the run hit its process limit (a fork failed).
   */
  killed: SandboxKill | null;
  durationMs: number;
  /** Peak memory and CPU time from the cgroup, when available. */
  usage: { maxMemoryBytes: number | null; cpuMs: number | null };
}

/** Runs programs in isolation with hard limits (DESIGN §4). */
export interface Sandbox {
  /** Null when this machine can run sandboxes, else a sentence why not (no bwrap, no cgroups…). */
  check(): Promise<string | null>;
  /**
   * Runs `spec.argv` in a fresh sandbox and resolves when every process of the run is gone and
   * its cgroup removed.
   * @throws GatehouseError INVALID_INPUT for a malformed spec (bad id, relative paths, a file
   *   under a mount); UNAVAILABLE when the machine cannot run sandboxes or the cgroup cannot be
   *   made. Nothing ran when it throws.
   */
  run(spec: SandboxSpec): Promise<SandboxResult>;
  /**
   * Kills every process left in this gateway's cgroups that no run of this instance owns, and
   * removes those cgroups (orphans of a crash); returns the ids reaped. Safe to repeat.
   */
  reapOrphans(): Promise<string[]>;
  /**
   * Kills every process of runs `ids` that another gateway of this host left in its cgroups (a
   * node that died and was taken over by this one), and removes those cgroups; returns the ids
   * found. Runs of this gateway are not touched. Safe to repeat.
   */
  reapLeftByOthers(ids: readonly string[]): Promise<string[]>;
  /** Kills running sandboxes and stops the helper process. Safe to call twice. */
  close(): Promise<void>;
}
