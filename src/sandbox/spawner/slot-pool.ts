import { randomUUID } from 'node:crypto';
import { ResourceLifecycle } from '../../core/index.js';
import type { Cgroups, HostUser, RunCgroup } from '../cgroups/cgroups.js';
import type { SpawnHandlers, SpawnerClient } from './spawner-client.js';
import { SPAWN_FD } from './spawner-protocol.js';

/**
 * A slot's shell, on the host: no core dumps, bounded file size, join each cgroup (so bubblewrap
 * and everything it forks are inside from the start), say `warm` on the status pipe, then read
 * one line — the command — and eval it. A read that fails (the spawner is gone) ends the slot.
 */
const SLOT_SCRIPT = `ulimit -c 0 && ulimit -f "$1" || exit 125
shift
while [ "$1" != -- ]; do echo $$ >"$1" || exit 125; shift; done
echo warm >&${SPAWN_FD.STATUS}
nl='
'
IFS= read -r line <&${SPAWN_FD.LINE} && eval "$line"
exit 125`;

/** How long after a launch the pool refills (see fillSoon()). */
const REFILL_DELAY_MS = 3;

/** A prepared process in its cgroups, waiting for its command; used by one run. */
export class Slot {
  readonly key = `slot-${randomUUID()}`;
  /** The shell is in its cgroups (so a launch does not wait for the move). */
  warm = false;
  private markWarm!: (warm: boolean) => void;
  /** Resolves true once the shell is in its cgroups, false if the slot ended before. */
  readonly warmed = new Promise<boolean>((resolve) => (this.markWarm = resolve));
  /** Whether the slot ended (its process gone) before a run attached to it. */
  endedBeforeAttach = false;
  /** The slot's process is gone. */
  ended = false;
  /** A warm sandbox's stub: what it wrote on its pipe so far. */
  private stubText = '';
  private markStubReady!: (ready: boolean) => void;
  /** A warm sandbox: resolves true once its stub waits for its call, false if it ended before. */
  readonly stubReady = new Promise<boolean>((resolve) => (this.markStubReady = resolve));
  /** A warm sandbox: its stub is about to exec the call's program (so the program started). */
  execed = false;
  private target: SpawnHandlers | null = null;
  private backlog: ((h: SpawnHandlers) => void)[] = [];
  private markDone!: () => void;
  /** Resolves once the slot's process and streams are gone. */
  readonly done = new Promise<void>((resolve) => (this.markDone = resolve));

  constructor(
    public cgroup: RunCgroup,
    readonly fileCount: number,
    private readonly onEndIdle: (slot: Slot) => void,
  ) {}

  /** What the spawner client calls; events before attach() wait for the run. */
  readonly handlers: SpawnHandlers = {
    warm: () => {
      this.warm = true;
      this.markWarm(true);
    },
    failed: (message) => this.emit((h) => h.failed(message)),
    stdout: (data) => this.emit((h) => h.stdout(data)),
    stderr: (data) => this.emit((h) => h.stderr(data)),
    exit: (code, signal) => this.emit((h) => h.exit(code, signal)),
    stub: (text) => {
      this.stubText += text;
      if (this.stubText.startsWith('ready\n')) this.markStubReady(true);
      if (this.stubText.startsWith('ready\nexec\n')) this.execed = true;
    },
    closed: (status) => this.end((h) => h.closed(status)),
    lost: () => this.end((h) => h.lost()),
  };

  /** Hands the slot's events to a run, replaying any that came before. */
  attach(target: SpawnHandlers): void {
    this.endedBeforeAttach = this.ended;
    this.target = target;
    for (const call of this.backlog) call(target);
    this.backlog = [];
  }

  private emit(call: (h: SpawnHandlers) => void): void {
    if (this.target !== null) call(this.target);
    else this.backlog.push(call);
  }

  private end(call: (h: SpawnHandlers) => void): void {
    this.ended = true;
    this.markWarm(false);
    this.markStubReady(false);
    this.emit(call);
    if (this.target === null) this.onEndIdle(this);
    this.markDone();
  }
}

/** What a {@link SlotPool} needs. */
export interface SlotPoolOptions {
  cgroups: Cgroups;
  spawner: SpawnerClient;
  /** The host user of the sandboxes when the gateway runs as root. */
  owner: HostUser | null;
  seccompPath: string;
  maxFileBytes: number;
  /** How many warm slots to keep (cgroup v1 only: they are renamed to their run's id). */
  size: number;
  /** File pipes of a warm slot; a run with more files gets a slot of its own. */
  fileCount: number;
}

/**
 * Slots prepared ahead of runs. Moving a process into a cgroup waits for an RCU grace period
 * (milliseconds), so warm slots join cgroups named `.warm-<uuid>` in the background; a run renames
 * one to its id and launches it. Without warm slots (cgroup v2, or more files than a warm slot
 * has), a run prepares a slot in a cgroup named by its id and waits for it.
 */
export class SlotPool {
  private idle: Slot[] = [];
  /** Cgroups of slots being prepared or idle: this pool's, not orphans. */
  private readonly warmCgroups = new Set<string>();
  private readonly preparing = new Set<Promise<void>>();
  private readonly state = new ResourceLifecycle('the slot pool');
  private readonly cleanups = new Set<Promise<void>>();

  constructor(private readonly options: SlotPoolOptions) {}

  /** Names of the cgroups of slots being prepared or idle: this pool's, not orphans. */
  cgroupNames(): Set<string> {
    return new Set(this.warmCgroups);
  }

  /**
   * A slot whose cgroup is named `id`, for a run with `fileCount` files. Call fillSoon() once it
   * is launched (not before: the spawner would spawn the next slot before launching this one).
   * @throws when the cgroup cannot be made (EEXIST: a cgroup of that name exists).
   */
  async take(id: string, fileCount: number): Promise<Slot> {
    if (this.options.cgroups.canRename && fileCount <= this.options.fileCount) {
      // A slot still joining its cgroups is nearly warm: waiting for it beats starting afresh.
      // It must be warm before the rename, since its shell joins the cgroups by path.
      const i = Math.max(
        this.idle.findIndex((s) => s.warm),
        0,
      );
      const slot = this.idle.splice(i, 1)[0];
      if (slot !== undefined && (await slot.warmed)) {
        const warmName = slot.cgroup.id;
        try {
          slot.cgroup = slot.cgroup.renameTo(id);
        } catch (err) {
          this.idle.push(slot);
          throw err;
        }
        this.warmCgroups.delete(warmName);
        return slot;
      }
    }
    const cgroup = this.options.cgroups.create(id, this.joinAs());
    return this.prepare(cgroup, fileCount);
  }

  /**
   * Calls fill() in a moment: after a launch, once the spawner has handed the run its command and
   * waits for it, since spawning the next slot blocks the spawner for about a millisecond.
   */
  fillSoon(): void {
    setTimeout(() => this.fill(), REFILL_DELAY_MS).unref();
  }

  /** Starts preparing warm slots up to the pool's size. */
  fill(): void {
    if (!this.options.cgroups.canRename) return;
    while (this.state.isOpen && this.idle.length + this.preparing.size < this.options.size) {
      const preparing = this.prepareWarm().then((slot) => {
        this.preparing.delete(preparing);
        if (slot !== null) this.idle.push(slot);
      });
      this.preparing.add(preparing);
    }
  }

  /** Ends the idle slots and removes their cgroups. Safe to call twice. */
  close(): Promise<void> {
    return this.state.close(async () => {
      await Promise.all(this.preparing);
      for (const slot of this.idle) this.options.spawner.kill(slot.key);
      await Promise.all(this.idle.map((s) => s.done));
      await Promise.all(this.cleanups);
    });
  }

  private async prepareWarm(): Promise<Slot | null> {
    const name = `.warm-${randomUUID()}`;
    this.warmCgroups.add(name);
    try {
      const cgroup = this.options.cgroups.create(name, this.joinAs());
      return await this.prepare(cgroup, this.options.fileCount);
    } catch {
      this.warmCgroups.delete(name);
      return null; // a run will prepare its own slot and report the failure
    }
  }

  private prepare(cgroup: RunCgroup, fileCount: number): Promise<Slot> {
    return prepareSlot(this.options, cgroup, { fileCount, stub: false }, (s) => this.discard(s));
  }

  /** The user a slot's shell runs as: the sandbox user when it can join its cgroups itself. */
  private joinAs(): HostUser | null {
    return joinAs(this.options);
  }

  /** A slot that ended before any run took it: forget it and remove its cgroup. */
  private discard(slot: Slot): void {
    this.idle = this.idle.filter((s) => s !== slot);
    const cleanup = slot.cgroup
      .killAll()
      .then(() => slot.cgroup.remove())
      .catch(() => undefined)
      .finally(() => {
        this.warmCgroups.delete(slot.cgroup.id);
        this.cleanups.delete(cleanup);
      });
    this.cleanups.add(cleanup);
  }
}

/** What preparing a slot needs of its pool's options. */
export type SlotOptions = Pick<
  SlotPoolOptions,
  'cgroups' | 'spawner' | 'owner' | 'seccompPath' | 'maxFileBytes'
>;

/** The user a slot's shell runs as: the sandbox user when it can join its cgroups itself. */
export function joinAs(options: SlotOptions): HostUser | null {
  return options.cgroups.ownerCanJoin ? options.owner : null;
}

/**
 * Spawns a slot in `cgroup`: a shell that joins it and waits for its line. `stub`: the slot of a
 * warm sandbox, whose stub pipe the spawner reads. `onEndIdle` hears of a slot that ended before
 * a run attached. Removes the cgroup when the spawn request fails.
 */
export async function prepareSlot(
  options: SlotOptions,
  cgroup: RunCgroup,
  o: { fileCount: number; stub: boolean },
  onEndIdle: (slot: Slot) => void,
): Promise<Slot> {
  const slot = new Slot(cgroup, o.fileCount, onEndIdle);
  const user = joinAs(options);
  try {
    await options.spawner.prepare(
      {
        type: 'prepare',
        key: slot.key,
        file: '/bin/sh',
        args: [
          '-c',
          SLOT_SCRIPT,
          'gatehouse-sandbox',
          String(Math.ceil(options.maxFileBytes / 512)),
          ...cgroup.procsFiles,
          '--',
        ],
        uid: user?.uid ?? null,
        gid: user?.gid ?? null,
        seccompPath: options.seccompPath,
        fileCount: o.fileCount,
        ...(o.stub ? { stub: true } : {}),
      },
      slot.handlers,
    );
  } catch (err) {
    await cgroup.remove().catch(() => undefined);
    throw err;
  }
  return slot;
}
