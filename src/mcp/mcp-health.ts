import type { McpServerState } from './mcp-server.js';
import { describeError } from './upstream/call-outcome.js';
import type { McpStore } from './mcp-store.js';
import type { McpSettings } from './mcp-service-options.js';
import { BackingOff } from './upstream/pool.js';
import type { UpstreamPool } from './upstream/pool.js';
import { ResourceLifecycle } from '../core/index.js';
import type { KeyedSerial } from '../core/index.js';
import type { ServerLifecycle } from './server-lifecycle.js';
import type { ToolBindings } from './tool-bindings.js';

/** Collaborators (shared with the MCP service) and settings of the {@link McpHealth} probe. */
interface McpHealthOptions {
  store: McpStore;
  pool: UpstreamPool;
  /** The per-server lock every probe runs under. */
  serial: KeyedSerial;
  lifecycle: Pick<ServerLifecycle, 'server' | 'move'>;
  bindings: Pick<ToolBindings, 'applyDiscovery' | 'applyTools'>;
  settings: Pick<
    McpSettings,
    'probeIntervalMs' | 'failuresToDegrade' | 'reprobeMs' | 'requestTimeoutMs'
  >;
}

/**
 * The health probe of active and degraded servers: every `probeIntervalMs` for all of them, and
 * sooner for one whose connection was lost or whose probe failed (a re-probe, backing off with
 * the failures in a row it counts per server).
 */
export class McpHealth {
  private readonly failures = new Map<string, number>();
  private readonly reprobes = new Map<string, NodeJS.Timeout>();
  /** `created`, `open` once started (on its schedule), then `closing` and `closed`. */
  private readonly state = new ResourceLifecycle('the health probe', 'created');
  private timer: NodeJS.Timeout | null = null;
  private probing = false;

  constructor(private readonly options: McpHealthOptions) {}

  /** Starts the scheduled probe. Safe to repeat; does nothing once closed. */
  start(): void {
    if (!this.state.is('created')) return;
    this.state.to('open');
    this.timer = setInterval(() => void this.probeAll(), this.options.settings.probeIntervalMs);
    this.timer.unref();
  }

  /** Stops the scheduled probe and cancels pending re-probes. Safe to repeat. */
  close(): void {
    // Nothing in the shutdown awaits: the timers are cleared before this returns.
    void this.state.close(() => {
      if (this.timer) clearInterval(this.timer);
      this.timer = null;
      for (const t of this.reprobes.values()) clearTimeout(t);
      this.reprobes.clear();
    });
  }

  /** Forgets the failed probes counted for a server (it was activated or retired). */
  forget(id: string): void {
    this.failures.delete(id);
  }

  /**
   * One probe, under the server's lock; a failure also schedules a re-probe. While the pool backs
   * off a reconnect no attempt is made, so nothing is counted and the re-probe comes when the
   * backoff ends. Never throws for an unhealthy server (see `McpService.probe`).
   * @returns the server's state afterwards.
   */
  probe(tenant: string, id: string): Promise<McpServerState> {
    return this.options.serial.run(id, async () => {
      const server = await this.options.lifecycle.server(tenant, id);
      if (server.state !== 'active' && server.state !== 'degraded') return server.state;
      try {
        const { conn, fresh } = await this.options.pool.get(server);
        await conn.ping(this.options.settings.requestTimeoutMs);
        if (fresh) {
          await this.options.bindings.applyDiscovery(
            server,
            await conn.discover(this.options.settings.requestTimeoutMs),
          );
        } else {
          const tools = await conn.listTools(this.options.settings.requestTimeoutMs);
          await this.options.bindings.applyTools(server, tools);
        }
        this.failures.set(id, 0);
        const now = await this.options.lifecycle.server(tenant, id);
        if (now.state === 'degraded')
          return (await this.options.lifecycle.move(now, 'active', 'system', null)).state;
        return now.state;
      } catch (err) {
        if (err instanceof BackingOff) {
          this.reprobeIn(tenant, id, err.retryInMs);
          return server.state;
        }
        await this.options.pool.drop(id);
        const n = (this.failures.get(id) ?? 0) + 1;
        this.failures.set(id, n);
        const now = await this.options.lifecycle.server(tenant, id);
        // Replaces a re-probe a loss reported during this probe set with the count before it.
        this.reprobeIn(tenant, id, this.reprobeDelay(id));
        if (now.state === 'active' && n >= this.options.settings.failuresToDegrade) {
          const reason = `${n} health probes failed in a row; last: ${describeError(err)}`;
          return (await this.options.lifecycle.move(now, 'degraded', 'system', reason)).state;
        }
        return now.state;
      }
    });
  }

  /**
   * Probes the server again soon (see `reprobeMs`), unless a re-probe is pending already: one
   * pending re-probe per server. Safe to repeat.
   */
  reprobeSoon(tenant: string, id: string): void {
    if (this.reprobes.has(id)) return;
    this.reprobeIn(tenant, id, this.reprobeDelay(id));
  }

  /** `reprobeMs` doubled with each failed probe in a row, up to `probeIntervalMs`. */
  private reprobeDelay(id: string): number {
    const n = Math.max(1, this.failures.get(id) ?? 0);
    const { reprobeMs, probeIntervalMs } = this.options.settings;
    return Math.min(reprobeMs * 2 ** (n - 1), probeIntervalMs);
  }

  /** Sets the server's one pending re-probe to `delay` ms from now, replacing one pending. */
  private reprobeIn(tenant: string, id: string, delay: number): void {
    if (this.state.isClosing) return;
    clearTimeout(this.reprobes.get(id));
    const timer = setTimeout(() => {
      this.reprobes.delete(id);
      if (!this.state.isClosing) this.probe(tenant, id).catch(() => undefined);
    }, delay);
    timer.unref();
    this.reprobes.set(id, timer);
  }

  private async probeAll(): Promise<void> {
    if (this.probing || this.state.isClosing) return;
    this.probing = true;
    try {
      const servers = await this.options.store.listInStates(['active', 'degraded']);
      await Promise.all(servers.map((s) => this.probe(s.tenant, s.id).catch(() => undefined)));
    } finally {
      this.probing = false;
    }
  }
}
