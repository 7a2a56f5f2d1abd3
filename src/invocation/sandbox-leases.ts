import { ErrorCode, GatehouseError, KeyedSerial, headersForOrigin } from '../core/index.js';
import type { OriginBoundHeader } from '../core/index.js';
import type { ExecutionCapacity, Lease, LeaseResources } from '../capacity/index.js';
import type { EgressDecision, EgressProxy } from '../egress/index.js';
import { byteTextRedactor } from '../secrets/index.js';
import type { BrokeredValue } from '../secrets/index.js';
import type { Workspaces } from '../sandbox/index.js';
import type { ExecutionLease } from './executor.js';

/** Defaults for what a sandboxed call gets when its descriptor says nothing. */
export interface SandboxDefaults {
  pool: string;
  resources: LeaseResources;
  egressAllow: string[];
  /** How long a call may wait for capacity. */
  queueBudgetMs: number;
  /** How long an attempt's shared lease lives after its last call. */
  attemptTtlMs: number;
  /**
   * Most attempt leases one agent may keep idle (no call using them); past it the least recently
   * used are ended, workspace and all, so idle attempts do not sit on capacity for their TTL.
   */
  idleAttemptsPerAgent: number;
}

/** What a descriptor may ask of its sandbox (`descriptor.sandbox`). */
export interface SandboxNeeds {
  pool?: string;
  cpus?: number;
  memoryMb?: number;
  gpus?: number;
  pids?: number;
  egress?: string[];
  readOnlyMounts?: { host: string; sandbox: string }[];
  /** For calls of an attempt: a git worktree of a configured repository at a ref. */
  worktree?: { repository: string; ref: string };
}

/** A lease in use by one call, and how to give it back. */
export interface HeldLease {
  lease: Lease;
  execution: ExecutionLease;
  /** Ends the call's use: closes its egress endpoint; releases a per-invocation lease. */
  done: () => Promise<void>;
}

/** What a call asks for. */
export interface LeaseAsk {
  tenant: string;
  /** The agent (principal) that asked: its lease quota and idle-attempt cap apply, and an attempt's workspace is its own. */
  agent: string;
  invocationId: string;
  runId: string | null;
  attemptId: string | null;
  needs: SandboxNeeds;
  /**
   * Make a call's own fresh workspace only when the executor asks for it
   * ({@link ExecutionLease.prepareWorkspace}); an attempt's or a worktree is always made first.
   */
  workspaceOnDemand?: boolean;
  timeoutMs: number;
  credentials: {
    env: Record<string, string>;
    files: { path: string; content: string; mode: number }[];
    leases: { ref: string; scope: string; expiresAt: string }[];
    /**
     * Brokered HTTP headers the egress proxy adds to the call's plain-HTTP requests, each only to
     * the exact origin it is bound to.
     */
    headers?: OriginBoundHeader[];
    /** Every brokered value, which the proxy removes from the answers to those requests. */
    values?: BrokeredValue[];
  };
  signal: AbortSignal;
  onQueued: () => Promise<void>;
  onEgress: (d: EgressDecision) => void;
}

/**
 * Leases for sandboxed calls: one per invocation (a fresh workspace), or one per attempt
 * (`runId` + `attemptId` of one agent principal) shared by that agent's calls of the attempt, one
 * call at a time, with a git worktree when the descriptor names one. The ids are the caller's
 * choice, so the attempt is keyed by the principal too: another agent of the tenant naming the
 * same ids while the attempt lives is refused, never let into its workspace. Each call gets its
 * own egress endpoint, so the decisions it records are its own.
 */
export class SandboxLeases {
  /** Turns of the calls of one attempt; a finished attempt's key holds no memory. */
  private readonly attempts = new KeyedSerial();
  private readonly inUse = new Set<string>();

  constructor(
    private readonly options: {
      capacity: ExecutionCapacity;
      workspaces: Workspaces;
      egress: EgressProxy;
      defaults: SandboxDefaults;
    },
  ) {}

  /** True while a call holds the lease (the reaper leaves it alone). */
  holds(leaseId: string): boolean {
    return this.inUse.has(leaseId);
  }

  /**
   * A lease for one call. @throws GatehouseError CAPACITY_EXHAUSTED or QUOTA_EXCEEDED (the
   *   tenant's or the agent's lease quota is full; both retryable, nothing ran) or
   * INVALID_INPUT (the call can never fit, an unknown repository or ref).
   */
  async hold(ask: LeaseAsk): Promise<HeldLease> {
    if (ask.runId === null || ask.attemptId === null) return this.holdForInvocation(ask);
    const ids = attemptIds(ask.runId, ask.attemptId);
    const holder = attemptHolder(ask.agent, ids);
    // Calls naming the same ids take turns, whoever makes them: those of one attempt share a
    // workspace, and a call of another agent must see the attempt's lease to be refused.
    const release = await this.attempts.acquire(attemptKey(ask.tenant, ids));
    try {
      const named = this.options.capacity
        .activeLeases()
        .filter((l) => l.tenant === ask.tenant && attemptIdsOf(l.holder) === ids);
      let lease = named.find((l) => l.holder === holder);
      if (!lease && named.length > 0) throw idsInUse(ask.runId, ask.attemptId);
      if (lease)
        lease = await this.options.capacity.touch(lease, this.options.defaults.attemptTtlMs);
      else {
        lease = await this.acquireWithWorkspace(ask, holder, this.options.defaults.attemptTtlMs);
      }
      const held = lease;
      return await this.attach(ask, held, async () => {
        // The next call's turn comes whatever the touch does: a storage error here must not
        // wedge the attempt (the lease then expires at its older time, and the reaper ends it).
        try {
          await this.options.capacity.touch(held, this.options.defaults.attemptTtlMs);
        } finally {
          release();
        }
        await this.endIdleBeyondCap(ask.tenant, ask.agent);
      });
    } catch (err) {
      release();
      throw err;
    }
  }

  /**
   * Ends the agent's least recently used idle attempt leases beyond its cap. Each is ended in its
   * attempt's turn, so a call of that attempt either finishes first or finds a fresh lease.
   */
  private async endIdleBeyondCap(tenant: string, agent: string): Promise<void> {
    const cap = this.options.defaults.idleAttemptsPerAgent;
    const idle = () => this.idleAttempts(tenant, agent);
    for (let over = idle(); over.length > cap; over = idle()) {
      await this.endOldestIdle(
        oldestOf(over)!,
        idle,
        `agent ${agent} kept more than ${cap} idle attempt lease(s); the least recently used ends`,
      );
    }
  }

  /**
   * While the agent's lease quota in the pool (or its tenant's) is full, ends the agent's least
   * recently used idle attempt leases of that pool: an attempt nobody uses must not make its own
   * agent wait for capacity or be refused QUOTA_EXCEEDED until its TTL runs out.
   */
  private async evictIdleForQuota(ask: LeaseAsk, pool: string): Promise<void> {
    const owner = { tenant: ask.tenant, agent: ask.agent, pool };
    const idle = () => this.idleAttempts(ask.tenant, ask.agent).filter((l) => l.pool === pool);
    for (;;) {
      const over = this.options.capacity.quotaBreach(owner);
      const oldest = over === null ? undefined : oldestOf(idle());
      if (over === null || oldest === undefined) return;
      await this.endOldestIdle(
        oldest,
        idle,
        `agent ${ask.agent}'s ${over.scope} lease quota in pool ${pool} was full (${over.held} of ${over.limit}); its least recently used idle attempt lease ends`,
      );
    }
  }

  /**
   * Ends this gateway's attempt leases as it stops, each in its attempt's turn (after a call of it
   * that is still finishing), workspace and all: nothing of them would outlive the process (the
   * next start reaps what is left), and a stopped gateway leaves no workspace mounted. One that
   * cannot be ended is left to that reaping. Call after the calls have drained.
   */
  async close(): Promise<void> {
    const attempts = this.options.capacity
      .activeLeases()
      .filter((l) => l.holder.startsWith('attempt/'));
    for (const lease of attempts) {
      const release = await this.attempts.acquire(
        attemptKey(lease.tenant, attemptIdsOf(lease.holder) ?? lease.holder),
      );
      try {
        await this.endLease(lease, 'the gateway stopped');
      } catch {
        // Left active: the next start of this node reaps it.
      } finally {
        release();
      }
    }
  }

  /** The agent's attempt leases that no call is using. */
  private idleAttempts(tenant: string, agent: string): Lease[] {
    return this.options.capacity
      .activeLeases()
      .filter(
        (l) =>
          l.tenant === tenant &&
          l.agent === agent &&
          l.holder.startsWith('attempt/') &&
          !this.inUse.has(l.id),
      );
  }

  /**
   * Ends `oldest` in its attempt's turn (the key its calls take), so a call of that attempt either
   * finishes first or finds a fresh lease; unless, by then, it is no longer the oldest of `idle()`.
   */
  private async endOldestIdle(oldest: Lease, idle: () => Lease[], reason: string): Promise<void> {
    const release = await this.attempts.acquire(
      attemptKey(oldest.tenant, attemptIdsOf(oldest.holder) ?? oldest.holder),
    );
    try {
      if (oldestOf(idle())?.id !== oldest.id) return;
      await this.endLease(oldest, reason);
    } finally {
      release();
    }
  }

  /**
   * Removes the lease's workspace (unless none was ever asked for), then releases the lease: also
   * when the removal fails (the reaper removes the workspace later).
   */
  private async endLease(lease: Lease, reason: string, hasWorkspace = true): Promise<void> {
    try {
      if (hasWorkspace)
        await this.options.workspaces.remove(lease.id, lease.worktree ? 'worktree' : 'plain');
    } finally {
      await this.options.capacity.release(lease, reason);
    }
  }

  private async holdForInvocation(ask: LeaseAsk): Promise<HeldLease> {
    const holder = `invocation/${ask.invocationId}`;
    const ttlMs = ask.timeoutMs + 60_000;
    if (ask.workspaceOnDemand !== true || ask.needs.worktree !== undefined) {
      const lease = await this.acquireWithWorkspace(ask, holder, ttlMs);
      return this.attach(ask, lease, () => this.endLease(lease, 'the call ended'));
    }
    const lease = await this.acquire(ask, holder, ttlMs);
    // Asked for at most once; once asked, removed at the end whatever came of it (a failed make
    // may leave a directory). A crash between leaves the directory under the lease's id, which
    // the reaper removes with the lease.
    let made: Promise<void> | null = null;
    const prepare = (): Promise<void> =>
      (made ??= this.options.workspaces.fresh(lease.id).then(() => undefined));
    return this.attach(
      ask,
      lease,
      () => this.endLease(lease, 'the call ended', made !== null),
      prepare,
    );
  }

  /** A new lease with its workspace: a worktree when the descriptor names one, else a fresh dir. */
  private async acquireWithWorkspace(ask: LeaseAsk, holder: string, ttlMs: number): Promise<Lease> {
    const lease = await this.acquire(ask, holder, ttlMs);
    // In use from the grant on: a reaper pass while the workspace is made (before the call
    // attaches) would otherwise find a lease whose invocation is not stored yet, take it for
    // done, and remove the workspace under the call ("bwrap: Can't find source path").
    this.inUse.add(lease.id);
    try {
      const w = ask.needs.worktree;
      const ws = w
        ? await this.options.workspaces.worktree(lease.id, w.repository, w.ref)
        : await this.options.workspaces.fresh(lease.id);
      lease.readOnlyMounts.push(...ws.readOnlyMounts);
      return lease;
    } catch (err) {
      this.inUse.delete(lease.id);
      await this.options.capacity.release(lease, 'its workspace could not be made');
      throw err;
    }
  }

  private async acquire(ask: LeaseAsk, holder: string, ttlMs: number): Promise<Lease> {
    const d = this.options.defaults;
    const n = ask.needs;
    const pool = n.pool ?? d.pool;
    await this.evictIdleForQuota(ask, pool);
    return this.options.capacity.acquire(
      {
        tenant: ask.tenant,
        agent: ask.agent,
        pool,
        holder,
        resources: {
          cpus: n.cpus ?? d.resources.cpus,
          memoryBytes:
            n.memoryMb !== undefined ? n.memoryMb * 1024 * 1024 : d.resources.memoryBytes,
          gpus: n.gpus ?? d.resources.gpus,
          pids: n.pids ?? d.resources.pids,
        },
        timeoutMs: ask.timeoutMs,
        readOnlyMounts: [...(n.readOnlyMounts ?? [])],
        egressAllow: n.egress ?? d.egressAllow,
        credentials: ask.credentials.leases.map((l) => ({
          ref: l.ref,
          scope: l.scope,
          expiresAt: l.expiresAt,
        })),
        worktree: n.worktree ?? null,
        ttlMs,
      },
      { budgetMs: d.queueBudgetMs, signal: ask.signal, onQueued: ask.onQueued },
    );
  }

  private async attach(
    ask: LeaseAsk,
    lease: Lease,
    after: () => Promise<void>,
    prepareWorkspace?: () => Promise<void>,
  ): Promise<HeldLease> {
    this.inUse.add(lease.id);
    let endpoint: Awaited<ReturnType<EgressProxy['open']>> | undefined;
    try {
      // One endpoint per call (its decisions are its own); a short id keeps the socket path short.
      // Only headers bound to an origin: an unbound one (published before that was refused) would
      // go to every host the egress allows, in cleartext.
      const headers = (ask.credentials.headers ?? []).filter((h) => h.origin !== undefined);
      endpoint = await this.options.egress.open(
        ask.invocationId.replace(/-/g, ''),
        lease.egressAllow,
        ask.onEgress,
        headers.length === 0
          ? {}
          : {
              injectHeaders: (origin) => headersForOrigin(headers, origin),
              scrub: byteTextRedactor(ask.credentials.values ?? []),
            },
      );
    } catch (err) {
      this.inUse.delete(lease.id);
      await after();
      throw err;
    }
    const execution: ExecutionLease = {
      id: lease.id,
      attempt: lease.holder.startsWith('attempt/'),
      workspace: this.options.workspaces.pathFor(lease.id),
      ...(prepareWorkspace === undefined ? {} : { prepareWorkspace }),
      freshWorkspace: !lease.holder.startsWith('attempt/') && lease.worktree === null,
      readOnlyMounts: lease.readOnlyMounts,
      limits: {
        memoryBytes: lease.resources.memoryBytes,
        cpus: lease.resources.cpus,
        pids: lease.resources.pids,
        timeoutMs: ask.timeoutMs,
      },
      egressSocket: endpoint.socketPath,
      env: ask.credentials.env,
      files: ask.credentials.files,
    };
    return {
      lease,
      execution,
      done: async () => {
        this.inUse.delete(lease.id);
        try {
          await endpoint.close();
        } finally {
          await after();
        }
      },
    };
  }
}

/** The key of an attempt's turns: its tenant and escaped ids. */
function attemptKey(tenant: string, ids: string): string {
  return `${tenant}\u0000${ids}`;
}

/** The least recently used of `leases`: the first to expire (the first listed among equals). */
function oldestOf(leases: readonly Lease[]): Lease | undefined {
  return leases.reduce<Lease | undefined>(
    (a, l) => (a && a.expiresAt <= l.expiresAt ? a : l),
    undefined,
  );
}

/**
 * The ids of an attempt as one key: each escaped, so no two pairs make the same key (`a/b` + `c`
 * is not `a` + `b/c`).
 */
function attemptIds(runId: string, attemptId: string): string {
  return `${encodeURIComponent(runId)}/${encodeURIComponent(attemptId)}`;
}

/** The holder of an attempt's lease: `attempt/<principal>/<runId>/<attemptId>`, each escaped. */
function attemptHolder(principal: string, ids: string): string {
  return `attempt/${encodeURIComponent(principal)}/${ids}`;
}

/** The escaped ids of an attempt lease's holder, or null for any other holder. */
function attemptIdsOf(holder: string): string | null {
  const parts = holder.split('/');
  return parts.length === 4 && parts[0] === 'attempt' ? `${parts[2]}/${parts[3]}` : null;
}

function idsInUse(runId: string, attemptId: string): GatehouseError {
  return new GatehouseError(
    ErrorCode.ATTEMPT_IDS_IN_USE,
    `runId ${JSON.stringify(runId)} with attemptId ${JSON.stringify(attemptId)} names a live attempt of another agent of your tenant; an attempt's workspace belongs to the agent that opened it. Choose other ids (e.g. a fresh UUID as runId); nothing ran.`,
    { details: { runId, attemptId } },
  );
}
