import { access, chown, lstat, mkdir, mkdtemp, readlink, rm } from 'node:fs/promises';
import { createHash } from 'node:crypto';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import {
  ErrorCode,
  GatehouseError,
  IllegalStateError,
  ResourceLifecycle,
} from '../../core/index.js';
import {
  NOT_STARTED_FD,
  bareBwrapArgs,
  bwrapOptions,
  packBwrapOptions,
  sandboxCommand,
  slotCommandLine,
} from './bwrap-args.js';
import type { HostLayout } from './bwrap-args.js';
import { checkSpec, checkWritableMounts } from './check-spec.js';
import type { Cgroups, HostUser } from '../cgroups/cgroups.js';
import { confinedArgs } from './confined-command.js';
import type { ConfinedCommand, ConfinedSpec } from './confined-command.js';
import { DEFAULT_CGROUP_PARENT, detectCgroups } from '../cgroups/detect-cgroups.js';
import type { Sandbox, SandboxResult, SandboxSpec } from '../sandbox.js';
import { compileSeccompFilter } from './seccomp-filter.js';
import { SlotPool } from '../spawner/slot-pool.js';
import type { Slot } from '../spawner/slot-pool.js';
import { SpawnerClient } from '../spawner/spawner-client.js';
import { SPAWN_FD } from '../spawner/spawner-protocol.js';
import type { LaunchRequest } from '../spawner/spawner-protocol.js';
import { superviseRun } from '../spawner/supervise-run.js';
import { WarmPool } from '../spawner/warm-pool.js';
import type { WarmPoolSettings, WarmSandbox } from '../spawner/warm-pool.js';
import { stubLine } from './warm-stub.js';
import { runHere } from '../host-tmpfs.js';
import type { HostCommandRunner } from '../host-tmpfs.js';

/** Options of {@link BwrapSandbox.start}. */
export interface BwrapSandboxOptions {
  /** A directory of the gateway's for the compiled seccomp filter (and, from sources, the spawner). */
  stateDir: string;
  /** Where the cgroup hierarchies are mounted. Default `/sys/fs/cgroup`. */
  cgroupRoot?: string;
  /**
   * The directory under each hierarchy that holds this gateway's run cgroups, and the only one
   * reapOrphans() empties. Default `gatehouse/<hash of stateDir>`: a gateway restarted on the
   * same state reaps what it left, and two gateways with different state never reap each other.
   */
  cgroupParent?: string;
  /**
   * The host user sandboxes run as when the gateway runs as root (default 65534:65534, `nobody`).
   * Never root: a sandbox whose user maps to host root could write /proc/sys and
   * /proc/sysrq-trigger. Workspaces must be writable, and mounts readable, by this user.
   */
  sandboxUser?: HostUser;
  /** Default `/usr/bin/bwrap`. */
  bwrapPath?: string;
  /** RLIMIT_FSIZE of sandboxed programs. Default 4 GiB. */
  maxFileBytes?: number;
  /**
   * Sandboxes kept prepared (in their cgroups, waiting for a command), so a run does not wait for
   * the kernel to move a process into a cgroup. cgroup v1 only. Default 2.
   */
  warmSlots?: number;
  /**
   * Sandboxes started whole ahead of their calls (see {@link WarmPool}), in `dir` (the caller's,
   * emptied of what a crashed predecessor left); size 0 or absent: none. cgroup v1 only (a warm sandbox's cgroup is renamed to its call's id).
   */
  warmPool?: WarmPoolSettings & { dir: string };
}

/** A bubblewrap command line for benchmarks: the same flags as a run, without spawner or cgroup. */
export interface BareCommand {
  file: string;
  args: string[];
  /** Give this file as descriptor 3 (the seccomp filter). */
  seccompPath: string;
  /** Spawn as this user (null: as the gateway's). */
  user: HostUser | null;
}

const SOCAT = '/usr/bin/socat';
const SETPRIV = '/usr/bin/setpriv';
/** File pipes of a warm slot (descriptors 7–9: dash redirects only single-digit ones). */
const WARM_SLOT_FILES = 3;

/**
 * The Linux sandbox (DESIGN §4): bubblewrap namespaces, a seccomp filter, cgroup limits. Spawns go
 * through a small helper process (spawner/spawner-main.ts), not the gateway's own large one.
 */
export class BwrapSandbox implements Sandbox {
  private readonly active = new Map<string, Promise<unknown>>();
  private checked: Promise<string | null> | null = null;
  private readonly state = new ResourceLifecycle('the sandbox');
  /** Whether socat is installed, asked once (not per run). */
  private socat: Promise<boolean> | null = null;

  private constructor(
    private readonly bwrap: string,
    private readonly slots: SlotPool | null,
    private readonly cgroups: Cgroups | null,
    private readonly owner: HostUser | null,
    /** Empty when the slot shell already runs as the sandbox user, else the setpriv that drops to it. */
    private readonly dropPrivileges: string[],
    /** The compiled seccomp filter ('' when it did not compile). */
    readonly seccompPath: string,
    private readonly unusable: string | null,
    private readonly layout: HostLayout,
    private readonly spawner: SpawnerClient,
    private readonly maxFileBytes: number,
    /** Sandboxes started ahead of their calls; null when off or not possible here. */
    readonly warm: WarmPool | null = null,
  ) {}

  /**
   * Prepares the sandbox: finds the cgroups, compiles the seccomp filter, starts the spawner.
   * A machine that cannot run sandboxes does not make this throw: check() says why.
   * @throws when the state directory cannot be made or the spawner does not start.
   */
  static async start(options: BwrapSandboxOptions): Promise<BwrapSandbox> {
    await mkdir(options.stateDir, { recursive: true, mode: 0o700 });
    const bwrap = options.bwrapPath ?? '/usr/bin/bwrap';
    const reasons: string[] = [];
    if (!(await exists(bwrap))) reasons.push(`${bwrap} is missing (apt-get install bubblewrap)`);
    const instance = createHash('sha256').update(resolve(options.stateDir)).digest('hex');
    const found = await detectCgroups(
      options.cgroupRoot ?? '/sys/fs/cgroup',
      options.cgroupParent ?? `${DEFAULT_CGROUP_PARENT}/${instance.slice(0, 12)}`,
    );
    if (typeof found === 'string') reasons.push(found);
    let seccompPath = '';
    try {
      seccompPath = await compileSeccompFilter(options.stateDir);
    } catch (err) {
      reasons.push(
        `the seccomp filter does not compile (apt-get install python3-seccomp): ${gist(err)}`,
      );
    }
    const owner =
      process.getuid?.() === 0 ? (options.sandboxUser ?? { uid: 65534, gid: 65534 }) : null;
    if (owner?.uid === 0) throw new IllegalStateError('sandboxUser must not be root');
    const cgroups = typeof found === 'string' ? null : found;
    const spawner = new SpawnerClient(options.stateDir, cgroups?.parentDirs() ?? []);
    await spawner.start();
    const unusable = reasons.length > 0 ? `${reasons.join('; ')}.` : null;
    const maxFileBytes = options.maxFileBytes ?? 4 * 2 ** 30;
    const slots =
      cgroups === null || unusable !== null
        ? null
        : new SlotPool({
            cgroups,
            spawner,
            owner,
            seccompPath,
            maxFileBytes,
            size: options.warmSlots ?? 2,
            fileCount: WARM_SLOT_FILES,
          });
    const dropPrivileges =
      owner !== null && cgroups !== null && !cgroups.ownerCanJoin
        ? [SETPRIV, `--reuid=${owner.uid}`, `--regid=${owner.gid}`, '--clear-groups', '--']
        : [];
    const layout = await hostLayout();
    const w = options.warmPool;
    const warm =
      slots === null || cgroups === null || !cgroups.canRename || w === undefined || w.size <= 0
        ? null
        : new WarmPool({
            ...w,
            cgroups,
            spawner,
            owner,
            seccompPath,
            maxFileBytes,
            bwrap,
            dropPrivileges,
            layout,
          });
    return new BwrapSandbox(
      bwrap,
      slots,
      cgroups,
      owner,
      dropPrivileges,
      seccompPath,
      unusable,
      layout,
      spawner,
      maxFileBytes,
      warm,
    );
  }

  /** Null when sandboxes run here; else why not. Runs `true` in a sandbox once to be sure. */
  check(): Promise<string | null> {
    this.checked ??= this.probe().then((why) => {
      if (why === null) {
        this.slots?.fill();
        this.warm?.fill();
      }
      return why;
    });
    return this.checked;
  }

  async run(spec: SandboxSpec): Promise<SandboxResult> {
    if (!this.state.isOpen) throw new IllegalStateError('BwrapSandbox.run() after close()');
    checkSpec(spec);
    const why = await this.check();
    if (why !== null) {
      throw new GatehouseError(
        ErrorCode.UNAVAILABLE,
        `Sandboxes cannot run on this machine: ${why}`,
      );
    }
    if (spec.egressSocket !== null && !(await (this.socat ??= exists(SOCAT)))) {
      throw new GatehouseError(
        ErrorCode.UNAVAILABLE,
        `Egress needs ${SOCAT} (apt-get install socat).`,
      );
    }
    return this.execute(spec);
  }

  async reapOrphans(): Promise<string[]> {
    const reaped: string[] = [];
    const failed: string[] = [];
    const ours = new Set([
      ...(this.slots?.cgroupNames() ?? []),
      ...(this.warm?.cgroupNames() ?? []),
    ]);
    for (const id of this.cgroups?.list() ?? []) {
      if (this.active.has(id) || ours.has(id)) continue;
      try {
        const cgroup = this.cgroups!.existing(id);
        await cgroup.killAll();
        await cgroup.remove();
        reaped.push(id);
      } catch (err) {
        failed.push(`${id}: ${gist(err)}`);
      }
    }
    if (failed.length > 0) {
      throw new GatehouseError(
        ErrorCode.INTERNAL,
        `Could not reap sandbox cgroups: ${failed.join('; ')}`,
        {
          details: { reaped },
        },
      );
    }
    return reaped;
  }

  async reapLeftByOthers(ids: readonly string[]): Promise<string[]> {
    const reaped: string[] = [];
    for (const id of ids) {
      const left = this.cgroups?.leftByOthers(id) ?? [];
      for (const cgroup of left) {
        await cgroup.killAll();
        await cgroup.remove();
      }
      if (left.length > 0) reaped.push(id);
    }
    return reaped;
  }

  close(): Promise<void> {
    return this.state.close(async () => {
      await this.warm?.close();
      await this.slots?.close();
      await this.spawner.close();
      await Promise.allSettled(this.active.values());
      this.cgroups?.removeParentIfEmpty();
    });
  }

  /**
   * Runs `mount` or `umount` in the sandbox's spawner, a small process whose spawns cost far less
   * than the gateway's own (for the bounded workspaces of leases); once the sandbox is closed,
   * from this process. Throws as {@link HostCommandRunner} says.
   */
  readonly hostCommand: HostCommandRunner = (command, args) =>
    this.state.isOpen ? this.spawner.host(command, args) : runHere(command, args);

  /** The same bubblewrap flags as run() would use for `spec`, for spawning bwrap directly. */
  bareCommand(spec: Omit<SandboxSpec, 'files'>): BareCommand {
    return {
      file: this.bwrap,
      args: bareBwrapArgs(spec, this.layout),
      seccompPath: this.seccompPath,
      user: this.owner,
    };
  }

  /**
   * A long-lived sandboxed process the caller spawns and talks to itself (an MCP stdio server):
   * bubblewrap with the same flags as a run, started by a shell that first joins a cgroup of the
   * spec's id with the spec's limits (memory, CPU, pids; file size and no core dumps as rlimits).
   * The timeout is not enforced: the caller ends the process, then calls `release()`. Until then
   * reapOrphans() leaves the cgroup alone, and close() waits for the release.
   * @throws GatehouseError UNAVAILABLE when sandboxes cannot run here or the cgroup cannot be made;
   *   INVALID_INPUT when a run or process of that id is in progress, or a writable mount is
   *   malformed or covers a reserved or system path.
   */
  async confinedCommand(spec: ConfinedSpec): Promise<ConfinedCommand> {
    if (!this.state.isOpen)
      throw new IllegalStateError('BwrapSandbox.confinedCommand() after close()');
    const why = await this.check();
    if (why !== null)
      throw new GatehouseError(
        ErrorCode.UNAVAILABLE,
        `Sandboxes cannot run on this machine: ${why}`,
      );
    if (this.active.has(spec.id))
      throw new GatehouseError(ErrorCode.INVALID_INPUT, `A sandbox with id ${spec.id} is in use.`);
    checkWritableMounts(spec.writableMounts ?? []);
    const cgroups = this.cgroups!;
    const joinAs = cgroups.ownerCanJoin ? this.owner : null;
    let cgroup;
    try {
      cgroup = cgroups.create(spec.id, joinAs);
    } catch (err) {
      throw new GatehouseError(
        ErrorCode.UNAVAILABLE,
        `Cannot make the cgroup of sandbox ${spec.id}: ${gist(err)}`,
        { cause: err },
      );
    }
    try {
      cgroup.setLimits(spec.limits);
    } catch (err) {
      await cgroup.remove().catch(() => undefined);
      throw new GatehouseError(
        ErrorCode.UNAVAILABLE,
        `Cannot set the limits of sandbox ${spec.id}: ${gist(err)}`,
        { cause: err },
      );
    }
    let settle!: () => void;
    this.active.set(spec.id, new Promise<void>((resolve) => (settle = resolve)));
    let released: Promise<void> | null = null;
    const { file, args, options } = confinedArgs(spec, this.layout, {
      cgroup,
      bwrap: this.bwrap,
      dropPrivileges: this.dropPrivileges,
      maxFileBytes: this.maxFileBytes,
    });
    return {
      file,
      args,
      options,
      seccompPath: this.seccompPath,
      user: joinAs,
      usage: () => ({ ...cgroup.usage(), limitHit: cgroup.limitHit() }),
      release: () =>
        (released ??= (async () => {
          try {
            await cgroup.killAll();
            await cgroup.remove();
          } finally {
            // A cgroup that would not go is left for reapOrphans() at the next start.
            this.active.delete(spec.id);
            settle();
          }
        })()),
    };
  }

  private async execute(spec: SandboxSpec): Promise<SandboxResult> {
    if (spec.signal.aborted) {
      return {
        exitCode: null,
        signal: null,
        started: false,
        killed: 'abort',
        durationMs: 0,
        usage: { maxMemoryBytes: null, cpuMs: null },
      };
    }
    if (this.active.has(spec.id)) {
      throw new GatehouseError(
        ErrorCode.INVALID_INPUT,
        `A sandbox run with id ${spec.id} is in progress.`,
      );
    }
    let settle!: () => void;
    this.active.set(spec.id, new Promise<void>((resolve) => (settle = resolve)));
    try {
      const warm = this.warm?.fits(spec) === true ? this.warm.take(spec.id) : null;
      if (warm !== null) {
        const result = await this.runWarm(spec, warm);
        if (result !== null) return result;
      }
      // A cold run binds the call's own workspace: made now, when it was left to be made on demand.
      await spec.prepareWorkspace?.();
      const files = spec.files ?? [];
      let slot: Slot;
      try {
        slot = await this.slots!.take(spec.id, files.length);
      } catch (err) {
        throw new GatehouseError(
          ErrorCode.UNAVAILABLE,
          `Cannot prepare sandbox run ${spec.id} (${gist(err)}); if a crashed run left its cgroup, reapOrphans() removes it.`,
          { cause: err },
        );
      }
      try {
        slot.cgroup.setLimits(spec.limits);
        if (spec.egressSocket !== null && this.owner !== null) {
          // The sandbox user must be able to connect; a missing socket fails bubblewrap's setup.
          await chown(spec.egressSocket, this.owner.uid, this.owner.gid).catch(() => undefined);
        }
      } catch (err) {
        this.spawner.kill(slot.key);
        await slot.done;
        await slot.cgroup.killAll().catch(() => undefined);
        await slot.cgroup.remove().catch(() => undefined);
        throw new GatehouseError(
          ErrorCode.UNAVAILABLE,
          `Cannot set the limits of sandbox run ${spec.id}: ${gist(err)}`,
          {
            cause: err,
          },
        );
      }
      const launch = this.launchRequest(spec, slot);
      const running = superviseRun(spec, slot, this.spawner, () => this.spawner.launch(launch));
      this.slots!.fillSoon();
      return await running;
    } finally {
      this.active.delete(spec.id);
      settle();
    }
  }

  /**
   * Runs `spec` in a warm sandbox: the call's limits on its cgroup, its relay pointed at the
   * call's egress endpoint, then its line to the stub. The timeout counts from here. Null when
   * the limits cannot be set (the sandbox is discarded; the caller starts cold).
   */
  private async runWarm(spec: SandboxSpec, warm: WarmSandbox): Promise<SandboxResult | null> {
    const pool = this.warm!;
    try {
      warm.slot.cgroup.setLimits(spec.limits);
    } catch {
      this.spawner.kill(warm.slot.key);
      await warm.slot.done;
      await warm.slot.cgroup.killAll().catch(() => undefined);
      await warm.slot.cgroup.remove().catch(() => undefined);
      pool.retire(warm);
      return null;
    }
    warm.relay?.use(spec.egressSocket);
    const stdin = spec.stdin === undefined ? null : Buffer.from(spec.stdin);
    const running = superviseRun(
      spec,
      warm.slot,
      this.spawner,
      () => this.spawner.call({ type: 'call', key: warm.slot.key, line: stubLine(spec), stdin }),
      true,
    );
    try {
      return await running;
    } finally {
      pool.retire(warm);
    }
  }

  private launchRequest(spec: SandboxSpec, slot: Slot): LaunchRequest {
    const files = spec.files ?? [];
    const options = bwrapOptions(spec, this.layout, {
      seccomp: SPAWN_FD.SECCOMP,
      status: SPAWN_FD.STATUS,
      firstFile: SPAWN_FD.FIRST_FILE,
    });
    const unusedFiles = Array.from(
      { length: slot.fileCount - files.length },
      (_, i) => SPAWN_FD.FIRST_FILE + files.length + i,
    );
    // With egress a shell execs the program; bubblewrap's status then tells of the shell, so
    // the shell itself says when the program was never exec'd.
    const forwarded = spec.egressSocket !== null;
    return {
      type: 'launch',
      key: slot.key,
      line: slotCommandLine(
        this.dropPrivileges,
        this.bwrap,
        [SPAWN_FD.LINE, ...unusedFiles],
        sandboxCommand(spec, forwarded),
        forwarded ? NOT_STARTED_FD : null,
      ),
      options: packBwrapOptions(options),
      files: files.map((f) => (typeof f.content === 'string' ? Buffer.from(f.content) : f.content)),
      stdin:
        spec.stdin === undefined
          ? null
          : typeof spec.stdin === 'string'
            ? Buffer.from(spec.stdin)
            : spec.stdin,
    };
  }

  private async probe(): Promise<string | null> {
    if (this.unusable !== null) return this.unusable;
    const workspace = await mkdtemp(join(tmpdir(), 'gatehouse-check-'));
    try {
      if (this.owner !== null) await chown(workspace, this.owner.uid, this.owner.gid);
      let stderr = '';
      const result = await this.execute({
        id: `gatehouse-check-${process.pid}-${Date.now()}`,
        argv: ['true'],
        env: {},
        workspace,
        readOnlyMounts: [],
        limits: { memoryBytes: 64 * 2 ** 20, cpus: 1, pids: 16, timeoutMs: 10_000 },
        egressSocket: null,
        onStdout: () => {},
        onStderr: (chunk) => (stderr += chunk.toString()),
        signal: new AbortController().signal,
      });
      if (result.started && result.exitCode === 0) return null;
      return `bubblewrap cannot start a sandbox here (exit ${result.exitCode ?? result.signal}): ${stderr.trim() || 'no message'}`;
    } catch (err) {
      return `a test sandbox failed: ${gist(err)}`;
    } finally {
      await rm(workspace, { recursive: true, force: true });
    }
  }
}

/** Whether /bin, /sbin, /lib… are symlinks into /usr (merged /usr) or directories. */
async function hostLayout(): Promise<HostLayout> {
  const topLinks: Record<string, string | null> = {};
  for (const name of ['bin', 'sbin', 'lib', 'lib32', 'lib64', 'libx32']) {
    try {
      const stat = await lstat(`/${name}`);
      if (stat.isSymbolicLink()) topLinks[name] = await readlink(`/${name}`);
      else if (stat.isDirectory()) topLinks[name] = null;
    } catch {
      // Absent on this host.
    }
  }
  return { topLinks };
}

async function exists(path: string): Promise<boolean> {
  try {
    await access(path);
    return true;
  } catch {
    return false;
  }
}

/** The telling line of an error: the last of its stderr (a python traceback) or message. */
function gist(err: unknown): string {
  const text =
    err instanceof Error ? (err as { stderr?: string }).stderr || err.message : String(err);
  return text.trim().split('\n').slice(-1)[0] ?? '';
}
