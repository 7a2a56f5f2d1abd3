/**
 * Messages between the gateway and its spawner process (spawner-main.ts), over Node's IPC
 * channel with the `advanced` serialization (Buffers travel as bytes, not JSON arrays).
 *
 * A sandbox starts in two steps. `prepare` spawns a slot: a shell that joins the run's cgroups
 * (the costly part: each move into a cgroup waits for an RCU grace period) and then waits for its
 * command line on LINE. `launch` sends that line and bubblewrap's options, and the shell execs
 * bubblewrap. Slots are prepared ahead, so a run does not wait for the cgroup move.
 */

/** Fixed descriptors of a slot's process (and of bubblewrap, which inherits them). */
export const SPAWN_FD = {
  /** The shell writes `warm` here once in its cgroups; then bubblewrap's JSON status. */
  STATUS: 3,
  /** The compiled seccomp filter, opened by the spawner for each slot. */
  SECCOMP: 4,
  /** The shell reads one line here: the command to exec (bubblewrap and the program's argv). */
  LINE: 5,
  /** bubblewrap reads its options here (`--args`), NUL-separated. */
  OPTIONS: 6,
  /** `files` of the spec, one pipe each, from here on. */
  FIRST_FILE: 7,
} as const;

/** Gateway → spawner: spawn a slot. */
export interface PrepareRequest {
  type: 'prepare';
  /** The slot's key in both processes. */
  key: string;
  file: string;
  args: string[];
  /** Host user to spawn `file` as; null keeps the spawner's. */
  uid: number | null;
  gid: number | null;
  seccompPath: string;
  /** How many file pipes (from FIRST_FILE) the slot has. */
  fileCount: number;
  /**
   * A warm sandbox's stub pipe (FIRST_FILE): what the stub inside writes there (`ready`, `exec`)
   * comes back as `stub` events; the call's line goes in by `call`.
   */
  stub?: boolean;
}

/**
 * Gateway → spawner: start a warm sandbox's bubblewrap now, before its call: its options and the
 * line, but stdin and the stub pipe stay open for the call.
 */
export interface StartRequest {
  type: 'start';
  key: string;
  line: string;
  options: Uint8Array;
}

/** Gateway → spawner: hand a warm sandbox's stub its call (one line) and the program's stdin. */
export interface CallRequest {
  type: 'call';
  key: string;
  /** The stub's line, without its newline. */
  line: string;
  stdin: Uint8Array | null;
}

/** Gateway → spawner: start the sandbox of a prepared slot. */
export interface LaunchRequest {
  type: 'launch';
  key: string;
  /** The shell command line, without its newline. */
  line: string;
  /** bubblewrap's options, NUL-separated. */
  options: Uint8Array;
  /** Contents for the pipes at FIRST_FILE, FIRST_FILE + 1, …; the others are closed empty. */
  files: Uint8Array[];
  stdin: Uint8Array | null;
}

/** Gateway → spawner: SIGKILL the slot's process, or stop reading its streams. */
interface ControlRequest {
  type: 'kill' | 'release';
  key: string;
}

/** The host commands the spawner runs for the gateway (`host` requests), and nothing else. */
export const HOST_COMMANDS = { mount: '/usr/bin/mount', umount: '/usr/bin/umount' } as const;
export type HostCommand = keyof typeof HOST_COMMANDS;

/**
 * Gateway → spawner: run a host command (mount or unmount a workspace's tmpfs) and answer with
 * `host-done`: a spawn from the spawner's small process costs far less than one from the gateway.
 */
export interface HostRequest {
  type: 'host';
  /** Names the answer. */
  id: number;
  command: HostCommand;
  args: string[];
}

/**
 * Gateway → spawner: the gateway is closing in order (it tears its runs down itself); the
 * disconnect that follows is not the gateway's loss.
 */
interface ClosingRequest {
  type: 'closing';
}

export type SpawnerRequest =
  | PrepareRequest
  | LaunchRequest
  | StartRequest
  | CallRequest
  | ControlRequest
  | HostRequest
  | ClosingRequest;

/** Spawner → gateway. */
export type SpawnerEvent =
  | { type: 'ready' }
  /** A host command ended: its exit code (null: killed, or it could not be spawned) and stderr. */
  | { type: 'host-done'; id: number; code: number | null; stderr: string }
  /** The slot's shell is in its cgroups, waiting for its line. */
  | { type: 'warm'; key: string }
  /** The process could not be spawned. `closed` follows. */
  | { type: 'failed'; key: string; message: string }
  | { type: 'stdout' | 'stderr'; key: string; data: Uint8Array }
  | { type: 'exit'; key: string; code: number | null; signal: string | null }
  /** What a warm sandbox's stub wrote on its pipe (`ready\n`, then `exec\n` just before the exec). */
  | { type: 'stub'; key: string; text: string }
  /** Every stream of the slot has closed; `status` is what was written to STATUS. */
  | { type: 'closed'; key: string; status: string };
