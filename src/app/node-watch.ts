import { hostname } from 'node:os';
import type { Logger } from 'pino';
import { isoTime } from '../core/index.js';
import type { Clock } from '../core/index.js';
import type { Signer } from '../audit/index.js';
import { reapNodeLeases } from '../capacity/index.js';
import type { GatewayNode, LeaseStore, NodeStore } from '../capacity/index.js';
import { recoverInterrupted } from '../invocation/index.js';
import type { InvocationRecord, InvocationStore } from '../invocation/index.js';
import type { NodeConfig } from './node-config.js';

/** Options of {@link NodeWatch.start}. */
export interface NodeWatchOptions {
  /** This node's id. */
  id: string;
  nodes: NodeStore;
  invocations: InvocationStore;
  leases: LeaseStore;
  signer: Signer;
  clock: Clock;
  config: NodeConfig;
  log: Pick<Logger, 'warn' | 'error'>;
}

/** What one takeover of a dead node did. */
export interface Takeover {
  node: GatewayNode;
  /** Its calls this node settled (`uncertain` or `failed`). */
  settled: InvocationRecord[];
  /** Ids of its leases this node marked reaped. */
  leases: string[];
}

/**
 * This gateway's place among the nodes of its database (DESIGN §12): registers the node, records
 * its heartbeat every interval, and on each tick takes over every other node whose heartbeat is
 * older than the grace period: claimed by one conditional update (two survivors never both act),
 * then its `running` write calls are settled `uncertain` (`ToolEffectUncertain`), its running
 * read calls and queued calls `failed`, and its leases marked reaped, each with its audit record.
 * `close()` deregisters the node (a clean shutdown); safe to call twice.
 */
export class NodeWatch {
  private timer: NodeJS.Timeout | undefined;
  private ticking: Promise<Takeover[]> | undefined;
  /** Nodes this one claimed whose takeover has not finished (storage failed); retried each tick. */
  private readonly unfinished = new Map<string, GatewayNode>();
  private closed = false;
  private closing: Promise<void> | undefined;
  private readonly listeners = new Set<(t: Takeover) => void>();

  private constructor(private readonly o: NodeWatchOptions) {}

  /**
   * Registers the node as alive now (its start), and resumes the takeovers a previous run of it
   * claimed and did not finish. Does not tick yet: see {@link startTicking}.
   */
  static async register(o: NodeWatchOptions): Promise<NodeWatch> {
    const w = new NodeWatch(o);
    const now = isoTime(o.clock.now());
    await o.nodes.register({
      id: o.id,
      host: hostname(),
      pid: process.pid,
      status: 'alive',
      startedAt: now,
      heartbeatAt: now,
      endedAt: null,
      claimedBy: null,
    });
    for (const n of await o.nodes.list())
      if (n.status === 'claimed' && n.claimedBy === o.id) w.unfinished.set(n.id, n);
    return w;
  }

  /** Ticks now (awaited) and then every heartbeat interval. */
  async startTicking(): Promise<Takeover[]> {
    const first = await this.tick();
    if (!this.closed) {
      this.timer = setInterval(() => void this.tick(), this.o.config.heartbeatMs);
      this.timer.unref();
    }
    return first;
  }

  /** Calls `listener` after each takeover; returns the unsubscribe. */
  onTakeover(listener: (t: Takeover) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /**
   * One tick: the heartbeat, then the takeover of every stale node. Concurrent calls share the
   * tick in progress. Never rejects: a failure is logged and the next tick tries again.
   * @returns the takeovers finished in this tick.
   */
  tick(): Promise<Takeover[]> {
    this.ticking ??= this.pass().finally(() => (this.ticking = undefined));
    return this.ticking;
  }

  private async pass(): Promise<Takeover[]> {
    const { o } = this;
    const now = o.clock.now();
    try {
      if (!(await o.nodes.heartbeat(o.id, isoTime(now)))) {
        // Silent past the grace period (a pause), so another node took over this one's calls.
        o.log.error(
          { node: o.id },
          'another node took this node over (its heartbeat was older than the grace period); registering again — calls it was running were settled by that node',
        );
        await this.reregister();
      }
      const claimed = await o.nodes.claimStale(o.id, isoTime(now - o.config.graceMs), isoTime(now));
      for (const n of claimed) this.unfinished.set(n.id, n);
    } catch (err) {
      o.log.warn({ err, node: o.id }, 'the node heartbeat failed; trying again at the next one');
    }
    const done: Takeover[] = [];
    for (const node of [...this.unfinished.values()]) {
      try {
        const t = await this.takeOver(node);
        this.unfinished.delete(node.id);
        done.push(t);
        for (const l of this.listeners) l(t);
      } catch (err) {
        o.log.warn({ err, node: node.id }, 'taking over a dead node failed; trying again');
      }
    }
    return done;
  }

  private async takeOver(node: GatewayNode): Promise<Takeover> {
    const { o } = this;
    const settled = await recoverInterrupted({
      store: o.invocations,
      signer: o.signer,
      clock: o.clock,
      nodes: [node.id],
      lost: { node: node.id, by: o.id },
    });
    const leases = await reapNodeLeases({
      store: o.leases,
      clock: o.clock,
      node: node.id,
      reason: `its node ${node.id} stopped heartbeating (last at ${node.heartbeatAt}); reaped by node ${o.id}`,
    });
    o.log.warn(
      {
        node: node.id,
        host: node.host,
        lastHeartbeat: node.heartbeatAt,
        uncertain: settled.filter((r) => r.status === 'uncertain').length,
        failed: settled.filter((r) => r.status === 'failed').length,
        leases: leases.length,
      },
      'took over a node that stopped heartbeating',
    );
    return { node, settled, leases: leases.map((l) => l.id) };
  }

  private async reregister(): Promise<void> {
    const stored = await this.o.nodes.get(this.o.id);
    const now = isoTime(this.o.clock.now());
    await this.o.nodes.register({
      id: this.o.id,
      host: hostname(),
      pid: process.pid,
      status: 'alive',
      startedAt: stored?.startedAt ?? now,
      heartbeatAt: now,
      endedAt: null,
      claimedBy: null,
    });
  }

  /** Stops ticking, waits for a tick in progress, and deregisters the node. Safe to call twice. */
  close(): Promise<void> {
    this.closing ??= this.shutdown();
    return this.closing;
  }

  private async shutdown(): Promise<void> {
    this.closed = true;
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    await this.ticking;
    await this.o.nodes.stop(this.o.id, isoTime(this.o.clock.now())).catch((err: unknown) => {
      this.o.log.warn({ err, node: this.o.id }, 'could not deregister the node');
    });
  }
}
