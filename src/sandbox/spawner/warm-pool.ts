import { randomUUID } from 'node:crypto';
import { lstatSync, readdirSync } from 'node:fs';
import { chown, mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { ResourceLifecycle } from '../../core/index.js';
import { bwrapOptions, packBwrapOptions, slotCommandLine } from '../bwrap/bwrap-args.js';
import type { HostLayout } from '../bwrap/bwrap-args.js';
import { stubCanRun, stubCommand } from '../bwrap/warm-stub.js';
import { procsOf } from '../cgroups/cgroups.js';
import { EgressRelay } from '../egress-relay.js';
import { mountTmpfs, unmountAll } from '../host-tmpfs.js';
import type { HostCommandRunner } from '../host-tmpfs.js';
import { removeTree } from '../remove-tree.js';
import type { SandboxSpec } from '../sandbox.js';
import { prepareSlot } from './slot-pool.js';
import type { Slot, SlotOptions } from './slot-pool.js';
import { SPAWN_FD } from './spawner-protocol.js';

/** The warm pool's settings (GATEHOUSE_SANDBOX_WARM). */
export interface WarmPoolSettings {
  /** Most warm sandboxes kept waiting. 0 = no pool. */
  size: number;
  /** Most warm sandboxes being started at once (refill). */
  refill: number;
  /**
   * Memory limit of each waiting warm sandbox (so the pool holds at most size × this), and the
   * most a call that takes one may be granted (its /tmp is sized to it); a call allowed more
   * starts cold.
   */
  memoryBytes: number;
  /** Whether warm sandboxes have egress (the forwarder listening); calls of the other shape start cold. */
  egress: boolean;
  /**
   * Most bytes a warm sandbox's workspace holds, as a lease's does (GATEHOUSE_WORKSPACE_MB): a
   * tmpfs of that size mounted on it (needs root). 0 = unbounded.
   */
  workspaceBytes?: number;
}

/** What a {@link WarmPool} needs. */
export interface WarmPoolOptions extends SlotOptions, WarmPoolSettings {
  /** A directory of the pool's own (0711 path to it) for workspaces and egress relay sockets. */
  dir: string;
  bwrap: string;
  dropPrivileges: readonly string[];
  layout: HostLayout;
}

/** A pre-started sandbox: bubblewrap running in its cgroup, its stub waiting for one call. */
export interface WarmSandbox {
  slot: Slot;
  /** The host directory bound at /workspace, made by the pool for this sandbox alone. */
  workspace: string;
  /** Its inode when made: a directory swapped in its place is not the one bound. */
  workspaceIno: number;
  /** The sandbox's way to the egress proxy, pointed at the call's endpoint at take. */
  relay: EgressRelay | null;
  /** Its processes once started (bubblewrap's two, the stub, the forwarder), sorted. */
  pids: string;
}

/** The processes of cgroup.procs files, sorted, as one string. */
function pidsIn(files: readonly string[]): string {
  return procsOf(files)
    .sort((a, b) => a - b)
    .join(',');
}

/** Processes a waiting warm sandbox may have: bubblewrap's two, the stub, the forwarder. */
const IDLE_PIDS = 16;
/** How long a warm sandbox may take to start before it is given up. */
const START_TIMEOUT_MS = 10_000;
/** How long after a take the pool refills (the spawner hands the call its line first). */
const REFILL_DELAY_MS = 3;

/**
 * Sandboxes started ahead of their calls (bubblewrap's namespaces and mounts made, seccomp on, in
 * a cgroup, the egress forwarder listening, a fresh workspace bound), each used by exactly one
 * call and then torn down whole: processes, cgroup, workspace and relay. A call takes one only
 * when its shape matches (no files, no extra mounts, a workspace nobody reads after the call, the
 * pool's egress, memory within the pool's); else, or when the pool is empty, it starts cold: an
 * exhausted pool never makes a call wait. Before handing one out the pool checks it is intact —
 * its process alive, its cgroup holding it, its workspace the empty directory it made — and
 * discards one that is not.
 */
export class WarmPool {
  private idle: WarmSandbox[] = [];
  /** Cgroup names of sandboxes starting or waiting: this pool's, not orphans. */
  private readonly names = new Set<string>();
  private starting = 0;
  private readonly startups = new Set<Promise<void>>();
  private readonly cleanups = new Set<Promise<void>>();
  private readonly state = new ResourceLifecycle('the warm sandbox pool');
  /** Sandboxes handed out or discarded, for tests and the bench. */
  readonly counts = { taken: 0, discarded: 0, started: 0 };

  /** Mounts and unmounts its workspaces from the spawner, not the gateway's large process. */
  private readonly hostCommand: HostCommandRunner;

  constructor(private readonly options: WarmPoolOptions) {
    this.hostCommand = (command, args) => options.spawner.host(command, args);
  }

  /** Cgroup names of warm sandboxes starting or waiting (reapOrphans() leaves them alone). */
  cgroupNames(): Set<string> {
    return new Set(this.names);
  }

  /** The sandboxes waiting now, oldest first (for tests that tamper with one). */
  waiting(): readonly WarmSandbox[] {
    return [...this.idle];
  }

  /** True when the pool is full and at rest: nothing starting, nothing being torn down. */
  get settled(): boolean {
    return this.idle.length >= this.options.size && this.starting === 0 && this.cleanups.size === 0;
  }

  /** How many wait, ready to be taken. */
  get ready(): number {
    return this.idle.length;
  }

  /** Whether a warm sandbox can stand in for a cold run of `spec`. */
  fits(spec: SandboxSpec): boolean {
    return (
      spec.freshWorkspace === true &&
      (spec.files ?? []).length === 0 &&
      spec.readOnlyMounts.length === 0 &&
      (spec.writableMounts ?? []).length === 0 &&
      (spec.egressSocket !== null) === this.options.egress &&
      spec.limits.memoryBytes <= this.options.memoryBytes &&
      stubCanRun(spec.argv)
    );
  }

  /**
   * An intact warm sandbox with its cgroup renamed to `id`, or null when none waits (the caller
   * starts cold). Tampered ones met on the way are discarded.
   */
  take(id: string): WarmSandbox | null {
    if (!this.state.isOpen) return null;
    for (let w = this.idle.shift(); w !== undefined; w = this.idle.shift()) {
      if (!this.intact(w)) {
        this.discard(w);
        this.fillSoon();
        continue;
      }
      const warmName = w.slot.cgroup.id;
      try {
        w.slot.cgroup = w.slot.cgroup.renameTo(id);
      } catch {
        this.discard(w); // a cgroup of that id exists: the cold path reports it
        return null;
      }
      this.names.delete(warmName);
      this.counts.taken += 1;
      return w;
    }
    return null;
  }

  /** Refills in a moment: after the spawner has handed the taken sandbox its call. */
  fillSoon(): void {
    setTimeout(() => this.fill(), REFILL_DELAY_MS).unref();
  }

  /** Starts warm sandboxes up to the pool's size, at most `refill` at once. */
  fill(): void {
    while (
      this.state.isOpen &&
      this.starting < this.options.refill &&
      this.idle.length + this.starting < this.options.size
    ) {
      this.starting += 1;
      const startup = this.startOne()
        .then((w) => {
          if (w === null) return;
          if (this.state.isOpen) this.idle.push(w);
          else this.discard(w);
        })
        .finally(() => {
          this.starting -= 1;
          this.startups.delete(startup);
          this.fill();
        });
      this.startups.add(startup);
    }
  }

  /**
   * Tears down what is left of a sandbox that ran its call (its cgroup is gone already): its
   * workspace and relay; then refills. In the background, after the call: starting a sandbox
   * costs a cold start's work, which must not compete with the call for the CPU. close() waits
   * for it.
   */
  retire(w: WarmSandbox): void {
    this.track(
      (async () => {
        await w.relay?.close();
        await this.removeWorkspace(w.workspace);
        this.fill();
      })(),
    );
  }

  /** Unmounts (when bounded) and removes a warm sandbox's workspace, whatever it holds. */
  private async removeWorkspace(path: string): Promise<void> {
    if ((this.options.workspaceBytes ?? 0) > 0) await unmountAll(path, this.hostCommand);
    await removeTree(path);
  }

  /** Ends every waiting sandbox and waits until all of them, and those retiring, are gone. */
  close(): Promise<void> {
    return this.state.close(async () => {
      await Promise.all(this.startups);
      for (const w of this.idle.splice(0)) this.discard(w);
      while (this.cleanups.size > 0) await Promise.all(this.cleanups);
    });
  }

  /** Whether nothing touched the sandbox since it started. */
  private intact(w: WarmSandbox): boolean {
    if (w.slot.ended) return false;
    // Each hierarchy's cgroup holds exactly the processes it started with: none killed or
    // moved out, none moved in, the cgroup not removed.
    if (w.slot.cgroup.procsFiles.some((file) => pidsIn([file]) !== w.pids)) {
      return false;
    }
    try {
      const stat = lstatSync(w.workspace);
      if (!stat.isDirectory() || stat.ino !== w.workspaceIno) return false;
      if (this.options.owner !== null && stat.uid !== this.options.owner.uid) return false;
      if (readdirSync(w.workspace).length > 0) return false;
      if (w.relay !== null && !lstatSync(w.relay.path).isSocket()) return false;
    } catch {
      return false;
    }
    return true;
  }

  /** A waiting sandbox whose process ended (killed from outside): discarded at once. */
  private ended(slot: Slot): void {
    const w = this.idle.find((x) => x.slot === slot);
    if (w === undefined) return; // still starting: startOne() gives it up
    this.idle = this.idle.filter((x) => x !== w);
    this.discard(w);
    this.fill();
  }

  /** Kills a sandbox no call took, removes its cgroup, workspace and relay. */
  private discard(w: WarmSandbox): void {
    this.counts.discarded += 1;
    this.options.spawner.kill(w.slot.key);
    const name = w.slot.cgroup.id;
    this.track(
      (async () => {
        await w.slot.done;
        await w.slot.cgroup.killAll().catch(() => undefined);
        await w.slot.cgroup.remove().catch(() => undefined);
        this.names.delete(name);
        await w.relay?.close();
        await this.removeWorkspace(w.workspace);
      })(),
    );
  }

  private track(cleanup: Promise<void>): void {
    const tracked = cleanup.catch(() => undefined).finally(() => this.cleanups.delete(tracked));
    this.cleanups.add(tracked);
  }

  /** Starts one warm sandbox; null when it could not (what it made is removed). */
  private async startOne(): Promise<WarmSandbox | null> {
    const o = this.options;
    const name = `.warm-${randomUUID()}`;
    const workspace = join(o.dir, randomUUID());
    let relay: EgressRelay | null = null;
    let slot: Slot | null = null;
    this.names.add(name);
    try {
      await mkdir(o.dir, { recursive: true, mode: 0o711 });
      await mkdir(workspace, { mode: 0o700 });
      if ((o.workspaceBytes ?? 0) > 0) {
        const id = o.owner ?? { uid: 0, gid: 0 };
        await mountTmpfs(
          workspace,
          {
            source: 'gatehouse-workspace',
            options: `size=${o.workspaceBytes},mode=0700,uid=${id.uid},gid=${id.gid},nosuid,nodev`,
            what: 'the workspace of a warm sandbox',
          },
          this.hostCommand,
        );
      }
      if (o.owner !== null) await chown(workspace, o.owner.uid, o.owner.gid);
      const workspaceIno = lstatSync(workspace).ino;
      if (o.egress) relay = await EgressRelay.open(o.dir, o.owner);
      const cgroup = o.cgroups.create(name, o.cgroups.ownerCanJoin ? o.owner : null);
      try {
        cgroup.setLimits({ memoryBytes: o.memoryBytes, cpus: 1, pids: IDLE_PIDS, timeoutMs: 1 });
      } catch (err) {
        await cgroup.remove().catch(() => undefined);
        throw err;
      }
      slot = await prepareSlot(o, cgroup, { fileCount: 1, stub: true }, (s) => this.ended(s));
      if (!(await slot.warmed))
        throw new Error('the warm sandbox ended before it joined its cgroup');
      const options = bwrapOptions(
        {
          env: {},
          workspace,
          readOnlyMounts: [],
          files: [],
          limits: { memoryBytes: o.memoryBytes, cpus: 1, pids: IDLE_PIDS, timeoutMs: 1 },
          egressSocket: relay?.path ?? null,
        },
        o.layout,
        { seccomp: SPAWN_FD.SECCOMP, status: SPAWN_FD.STATUS, firstFile: SPAWN_FD.FIRST_FILE },
      );
      o.spawner.startWarm({
        type: 'start',
        key: slot.key,
        line: slotCommandLine(o.dropPrivileges, o.bwrap, [SPAWN_FD.LINE], stubCommand(o.egress)),
        options: packBwrapOptions(options),
      });
      let timer: NodeJS.Timeout | undefined;
      const ready = await Promise.race([
        slot.stubReady,
        new Promise<boolean>(
          (resolve) => (timer = setTimeout(() => resolve(false), START_TIMEOUT_MS)),
        ),
      ]);
      clearTimeout(timer);
      if (!ready) throw new Error('the warm sandbox did not start');
      this.counts.started += 1;
      return { slot, workspace, workspaceIno, relay, pids: pidsIn(slot.cgroup.procsFiles) };
    } catch {
      if (slot !== null) {
        o.spawner.kill(slot.key);
        await slot.done;
        await slot.cgroup.killAll().catch(() => undefined);
        await slot.cgroup.remove().catch(() => undefined);
      } else {
        // The cgroup may exist without a slot (the spawn request failed: prepareSlot removed it).
      }
      this.names.delete(name);
      await relay?.close().catch(() => undefined);
      await this.removeWorkspace(workspace).catch(() => undefined);
      return null;
    }
  }
}
