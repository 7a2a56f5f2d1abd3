import { ErrorCode, GatehouseError, isoTime } from '../core/index.js';
import type { Clock, IdGenerator } from '../core/index.js';
import { transitionLease } from './lease.js';
import type { Lease, LeaseResources } from './lease.js';
import type { LeaseStore } from './lease-store.js';
import { leaseLedger } from './lease-ledger.js';
import { poolHoldings, quotaBreach } from './lease-quotas.js';
import type { LeaseOwner, LeaseQuotas, PoolHoldings, QuotaBreach } from './lease-quotas.js';

/** A pool of execution capacity, from configuration. */
export interface PoolConfig {
  name: string;
  cpus: number;
  memoryBytes: number;
  gpus: number;
  /** Most leases at once. */
  leases: number;
  /** Per-tenant and per-agent limits within the pool; none when absent. */
  quotas?: LeaseQuotas;
}

/** Capacity promised to a waiter let in from the queue, until its lease is stored. */
type Reservation = LeaseOwner & { resources: LeaseResources };

/** What a lease is asked for. */
export type LeaseRequest = Omit<
  Lease,
  'id' | 'node' | 'status' | 'createdAt' | 'expiresAt' | 'releasedAt' | 'endReason'
> & {
  /** How long the lease may live before the reaper ends it. */
  ttlMs: number;
};

/** How long to wait for capacity, and who to tell that the call is queued. */
export interface AcquireOptions {
  budgetMs: number;
  signal: AbortSignal;
  /** Called once if the request has to wait. */
  onQueued?: () => Promise<void> | void;
}

interface Waiter {
  request: LeaseRequest;
  resolve: (reservation: Reservation) => void;
}

/**
 * Execution capacity (DESIGN §4): pools with totals and per-tenant and per-agent quotas, leases
 * against them, and a fair queue in which a request waits within its budget: the next let in is
 * the waiter, within its quotas, of the tenant that holds the fewest leases of the pool (oldest
 * first among equals), and a request over its quota never holds up another tenant's. Leases are
 * durable; active ones count against their pool until released or reaped, also across a restart.
 */
export class ExecutionCapacity {
  private readonly active = new Map<string, Lease>();
  private readonly queue: Waiter[] = [];
  /** Capacity promised to waiters let in from the queue, until their leases are stored. */
  private readonly reserved = new Set<Reservation>();
  /** Told of each lease as it ends, before it is stored as ended. */
  private readonly endListeners: ((lease: Lease) => Promise<void>)[] = [];

  private constructor(
    private readonly options: {
      store: LeaseStore;
      clock: Clock;
      ids: IdGenerator;
      pools: PoolConfig[];
      node?: string;
    },
  ) {}

  /**
   * Loads the active leases, which keep their capacity until released or reaped. With `node`
   * (this gateway's node id) each lease granted carries it, and only this node's leases (and those
   * stored without a node) are loaded: other nodes' sandboxes hold theirs.
   */
  static async open(options: {
    store: LeaseStore;
    clock: Clock;
    ids: IdGenerator;
    pools: PoolConfig[];
    node?: string;
  }): Promise<ExecutionCapacity> {
    const c = new ExecutionCapacity(options);
    const nodes = options.node !== undefined ? [options.node, null] : undefined;
    for (const lease of await options.store.active(nodes))
      c.active.set(lease.id, { ...lease, agent: lease.agent ?? null });
    return c;
  }

  /** The pools with what is used and queued now. */
  usage(): { pool: PoolConfig; used: LeaseResources & { leases: number }; queued: number }[] {
    return this.options.pools.map((pool) => ({
      pool,
      used: this.used(pool.name),
      queued: this.queue.filter((w) => w.request.pool === pool.name).length,
    }));
  }

  /**
   * The quota of its pool `request` would go over now (the agent's or the tenant's), or null when
   * it is within both or its pool has none (or is unknown).
   */
  quotaBreach(request: LeaseOwner): QuotaBreach | null {
    const pool = this.options.pools.find((p) => p.name === request.pool);
    return pool ? this.breach(pool, request) : null;
  }

  /** The active leases (for the reaper). */
  activeLeases(): Lease[] {
    return [...this.active.values()];
  }

  /**
   * A lease for `request`, waiting in line within the budget when capacity is short.
   * @throws GatehouseError QUOTA_EXCEEDED (retryable, nothing ran; `details.scope` says whose
   *   quota, `tenant` or `agent`) when the budget runs out while the request is over a quota;
   *   CAPACITY_EXHAUSTED (transient, retryable: nothing ran) when the budget runs out short of
   *   capacity or the call is aborted while waiting; INVALID_INPUT when the request can
   *   never fit its pool (more GPUs, CPU or memory than the pool has) or names no pool.
   */
  async acquire(request: LeaseRequest, options: AcquireOptions): Promise<Lease> {
    const pool = this.options.pools.find((p) => p.name === request.pool);
    if (!pool)
      throw new GatehouseError(
        ErrorCode.INVALID_INPUT,
        `No execution pool named ${JSON.stringify(request.pool)}; pools: ${this.options.pools.map((p) => p.name).join(', ')}.`,
      );
    const never = neverFits(pool, request.resources);
    if (never)
      throw new GatehouseError(ErrorCode.INVALID_INPUT, never, { details: { pool: pool.name } });
    let reservation: Reservation | undefined;
    // Counted once for the queue and the request (and not at all without quotas).
    const holdings = pool.quotas ? this.holdings(pool.name) : undefined;
    const ahead = this.queue.some(
      (w) => w.request.pool === pool.name && this.breach(pool, w.request, holdings) === null,
    );
    if (
      ahead ||
      this.breach(pool, request, holdings) !== null ||
      !this.fits(pool, request.resources)
    ) {
      await options.onQueued?.();
      reservation = await this.wait(request, pool, options);
    }
    const now = this.options.clock.now();
    const lease: Lease = {
      ...withoutTtl(request),
      id: this.options.ids.next(),
      ...(this.options.node !== undefined ? { node: this.options.node } : {}),
      status: 'active',
      createdAt: isoTime(now),
      expiresAt: isoTime(now + request.ttlMs),
      releasedAt: null,
      endReason: null,
    };
    this.active.set(lease.id, lease);
    if (reservation) this.reserved.delete(reservation);
    try {
      await this.options.store.insert(
        lease,
        leaseLedger(lease, 'lease.granted', 'system', lease.createdAt, {
          resources: lease.resources,
          timeoutMs: lease.timeoutMs,
          egressAllow: lease.egressAllow,
          expiresAt: lease.expiresAt,
        }),
      );
    } catch (err) {
      this.active.delete(lease.id);
      this.wake();
      throw err;
    }
    return lease;
  }

  /**
   * Calls `listener` with each lease as it ends (released or reaped), before it is stored as
   * ended: what lives as long as a lease (a computer-use desktop) goes with it. A listener's
   * failure is a process warning; the lease ends all the same.
   */
  onEnd(listener: (lease: Lease) => Promise<void>): void {
    this.endListeners.push(listener);
  }

  /** Ends a lease its holder is done with. Safe to repeat. */
  release(lease: Lease, reason: string): Promise<void> {
    return this.end(lease, 'released', reason, 'lease.released');
  }

  /** Ends a lease the reaper found orphaned or expired. Safe to repeat. */
  reap(lease: Lease, reason: string): Promise<void> {
    return this.end(lease, 'reaped', reason, 'lease.reaped');
  }

  /** Extends a shared (attempt) lease while its calls keep using it. */
  async touch(lease: Lease, ttlMs: number): Promise<Lease> {
    const current = this.active.get(lease.id);
    if (!current) return lease;
    const extended = { ...current, expiresAt: isoTime(this.options.clock.now() + ttlMs) };
    this.active.set(lease.id, extended);
    await this.options.store.update(extended, { audit: [], events: [] });
    return extended;
  }

  private async end(
    lease: Lease,
    to: 'released' | 'reaped',
    reason: string,
    type: string,
  ): Promise<void> {
    const current = this.active.get(lease.id);
    if (!current) return;
    for (const listener of this.endListeners)
      await listener(current).catch((err: unknown) =>
        process.emitWarning(
          `what lived with lease ${lease.id} did not end with it: ${(err as Error).message}`,
          { code: 'GATEHOUSE_LEASE_END' },
        ),
      );
    const ended: Lease = {
      ...current,
      status: transitionLease(current.status, to),
      releasedAt: isoTime(this.options.clock.now()),
      endReason: reason,
    };
    await this.options.store.update(
      ended,
      leaseLedger(ended, type, to === 'reaped' ? 'reaper' : 'system', ended.releasedAt!, {
        reason,
      }),
    );
    this.active.delete(lease.id);
    this.wake();
  }

  /**
   * The quota `request` would go over now (null at once when its pool has none), counting the
   * leases and promises of its pool, or using `holdings` already counted.
   */
  private breach(
    pool: PoolConfig,
    request: LeaseOwner,
    holdings?: PoolHoldings,
  ): QuotaBreach | null {
    if (!pool.quotas) return null;
    return quotaBreach(pool.quotas, request, holdings ?? this.holdings(pool.name));
  }

  /** The leases and promises of `pool`, counted per tenant and per agent. */
  private holdings(pool: string): PoolHoldings {
    return poolHoldings(pool, this.active.values(), this.reserved);
  }

  private used(pool: string): LeaseResources & { leases: number } {
    const used = { cpus: 0, memoryBytes: 0, gpus: 0, pids: 0, leases: 0 };
    for (const l of [...this.active.values(), ...this.reserved]) {
      if (l.pool !== pool) continue;
      used.cpus += l.resources.cpus;
      used.memoryBytes += l.resources.memoryBytes;
      used.gpus += l.resources.gpus;
      used.pids += l.resources.pids;
      used.leases += 1;
    }
    return used;
  }

  private fits(pool: PoolConfig, r: LeaseResources): boolean {
    const u = this.used(pool.name);
    return (
      u.leases < pool.leases &&
      u.cpus + r.cpus <= pool.cpus + 1e-9 &&
      u.memoryBytes + r.memoryBytes <= pool.memoryBytes &&
      u.gpus + r.gpus <= pool.gpus
    );
  }

  private wait(
    request: LeaseRequest,
    pool: PoolConfig,
    options: AcquireOptions,
  ): Promise<Reservation> {
    return new Promise((resolve, reject) => {
      let reservation: Reservation | undefined;
      const waiter: Waiter = {
        request,
        resolve: (r) => {
          reservation = r;
          finish(null);
        },
      };
      const finish = (err: GatehouseError | null) => {
        clearTimeout(timer);
        options.signal.removeEventListener('abort', onAbort);
        const i = this.queue.indexOf(waiter);
        if (i >= 0) this.queue.splice(i, 1);
        if (err) {
          reject(err);
          this.wake();
        } else resolve(reservation!);
      };
      const exhausted = (why: string) => {
        const over = this.breach(pool, request);
        if (over) return overQuota(over, pool, options.budgetMs);
        return new GatehouseError(
          ErrorCode.CAPACITY_EXHAUSTED,
          `No capacity in pool ${pool.name} ${why}; nothing ran — retry later.`,
          { details: { pool: pool.name, budgetMs: options.budgetMs, retryable: true } },
        );
      };
      const timer = setTimeout(
        () => finish(exhausted(`within the ${options.budgetMs} ms queue budget`)),
        options.budgetMs,
      );
      const onAbort = () => finish(exhausted('before the call was aborted'));
      options.signal.addEventListener('abort', onAbort, { once: true });
      this.queue.push(waiter);
      this.wake();
    });
  }

  /**
   * Lets waiters in while they fit: per pool, the next is the waiter within its quotas whose
   * tenant holds the fewest leases of the pool, oldest first among equals; if it does not fit,
   * none after it goes in (a large request is not overtaken by smaller ones).
   */
  private wake(): void {
    for (const pool of this.options.pools) {
      for (;;) {
        const next = this.nextWaiter(pool);
        if (!next || !this.fits(pool, next.request.resources)) break;
        this.queue.splice(this.queue.indexOf(next), 1);
        const r = next.request;
        const reservation: Reservation = {
          pool: pool.name,
          tenant: r.tenant,
          agent: r.agent,
          resources: r.resources,
        };
        this.reserved.add(reservation);
        next.resolve(reservation);
      }
    }
  }

  private nextWaiter(pool: PoolConfig): Waiter | undefined {
    let best: { waiter: Waiter; held: number } | undefined;
    let holdings: PoolHoldings | undefined;
    for (const waiter of this.queue) {
      if (waiter.request.pool !== pool.name) continue;
      holdings ??= this.holdings(pool.name);
      if (this.breach(pool, waiter.request, holdings) !== null) continue;
      const held = holdings.tenants.get(waiter.request.tenant) ?? 0;
      if (!best || held < best.held) best = { waiter, held };
    }
    return best?.waiter;
  }
}

/** The refusal of a request that stayed over a quota for its whole budget. */
function overQuota(over: QuotaBreach, pool: PoolConfig, budgetMs: number): GatehouseError {
  const whose = over.scope === 'agent' ? `Agent ${over.holder}` : `Tenant ${over.holder}`;
  return new GatehouseError(
    ErrorCode.QUOTA_EXCEEDED,
    `${whose} holds ${over.held} of its ${over.limit} leases in pool ${pool.name} (its ${over.scope} quota) and none ended within the ${budgetMs} ms queue budget; nothing ran — retry when one of its calls or attempts has ended.`,
    {
      details: {
        pool: pool.name,
        scope: over.scope,
        [over.scope]: over.holder,
        limit: over.limit,
        held: over.held,
        budgetMs,
        retryable: true,
      },
    },
  );
}

function withoutTtl(r: LeaseRequest): Omit<LeaseRequest, 'ttlMs'> {
  const { ttlMs: _ttl, ...rest } = r;
  return rest;
}

function neverFits(pool: PoolConfig, r: LeaseResources): string | null {
  if (r.gpus > 0 && pool.gpus === 0)
    return `This call asks for ${r.gpus} GPU(s), but pool ${pool.name} has no GPUs on this machine; run it where GPUs are configured.`;
  if (r.gpus > pool.gpus)
    return `This call asks for ${r.gpus} GPUs; pool ${pool.name} has ${pool.gpus}.`;
  if (r.cpus > pool.cpus)
    return `This call asks for ${r.cpus} CPUs; pool ${pool.name} has ${pool.cpus}.`;
  if (r.memoryBytes > pool.memoryBytes)
    return `This call asks for ${r.memoryBytes} bytes of memory; pool ${pool.name} has ${pool.memoryBytes}.`;
  return null;
}
