import { isoTime } from '../core/index.js';
import type { Clock } from '../core/index.js';
import type { ExecutionCapacity } from './execution-capacity.js';
import type { Lease } from './lease.js';

/** What the reaper needs beyond capacity: how to tell a lease is orphaned, and how to clean up. */
export interface ReaperOptions {
  capacity: ExecutionCapacity;
  clock: Clock;
  /** True when the lease's holder is done (its invocation decided, or gone). */
  holderDone: (lease: Lease) => Promise<boolean>;
  /** True while a call of this process is using the lease. */
  inUse: (lease: Lease) => boolean;
  /** Ids of workspaces on disk, so ones without an active lease are removed too. */
  workspaces: () => Promise<string[]>;
  removeWorkspace: (leaseId: string) => Promise<void>;
  /** Anything else to sweep on each pass (expired credential leases). */
  onPass?: () => Promise<unknown>;
  /** How often to run (default 30 s). */
  intervalMs?: number;
  /**
   * Told of each lease or workspace a pass could not clean up; the pass goes on with the rest
   * and the next pass tries again. Default: a process warning.
   */
  onError?: (what: string, err: unknown) => void;
}

/**
 * The reaper (DESIGN §4): releases the leases of decided invocations and expired leases, kills
 * what they still run, removes their cgroups and workspaces — at start (orphans of a crash) and
 * then periodically. Each reaped lease is an audit record.
 */
export class Reaper {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<string[]> | undefined;

  constructor(private readonly options: ReaperOptions) {}

  /** One pass. Concurrent calls share the pass in progress. @returns the lease ids reaped. */
  runOnce(): Promise<string[]> {
    this.running ??= this.pass().finally(() => (this.running = undefined));
    return this.running;
  }

  private async pass(): Promise<string[]> {
    const now = this.options.clock.now();
    const reaped: string[] = [];
    for (const lease of this.options.capacity.activeLeases()) {
      if (this.options.inUse(lease)) continue;
      // One lease that cannot be reaped (its holder unreadable, storage failing) stops no other.
      await this.attempt(`lease ${lease.id}`, async () => {
        const expired = Date.parse(lease.expiresAt) <= now;
        const done = !expired && (await this.options.holderDone(lease));
        if (!expired && !done) return;
        await this.options.capacity.reap(
          lease,
          expired
            ? `expired at ${lease.expiresAt}; reaped at ${isoTime(now)}`
            : `its holder ${lease.holder} is done; reaped at ${isoTime(now)}`,
        );
        reaped.push(lease.id);
      });
    }
    if (this.options.onPass) await this.attempt('the pass hook', this.options.onPass);
    const onDisk = (await this.attempt('the workspace list', this.options.workspaces)) ?? [];
    // Read after the list: a lease is granted before its workspace is made, so a workspace listed
    // for a lease granted while the list was read is that lease's, not an orphan.
    const live = new Set(this.options.capacity.activeLeases().map((l) => l.id));
    for (const id of onDisk) {
      // One workspace that cannot be removed never keeps the others on disk.
      if (!live.has(id))
        await this.attempt(`workspace ${id}`, () => this.options.removeWorkspace(id));
    }
    return reaped;
  }

  /** Runs one step of a pass; a failure is reported and the pass goes on. */
  private async attempt<T>(what: string, step: () => Promise<T>): Promise<T | undefined> {
    try {
      return await step();
    } catch (err) {
      (this.options.onError ?? warn)(what, err);
      return undefined;
    }
  }

  /** Runs a pass now and then every interval. */
  async start(): Promise<string[]> {
    const first = await this.runOnce();
    this.timer = setInterval(
      () => void this.runOnce().catch(() => undefined),
      this.options.intervalMs ?? 30_000,
    );
    this.timer.unref();
    return first;
  }

  /** Stops the periodic passes. Safe to call twice. */
  close(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
  }
}

function warn(what: string, err: unknown): void {
  process.emitWarning(`the reaper could not clean up ${what}: ${(err as Error).message}`, {
    code: 'GATEHOUSE_REAPER',
  });
}
