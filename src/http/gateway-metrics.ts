import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import type { ExecutionCapacity } from '../capacity/index.js';
import type { InvocationStatus, PipelineMetrics, StageName } from '../invocation/index.js';
import type { StreamDropReason, StreamMetrics } from './event-stream-limits.js';

/** What a pool of execution capacity holds now, as `ExecutionCapacity.usage()` tells it. */
export type PoolUsage = ReturnType<ExecutionCapacity['usage']>[number];

/** Options of {@link GatewayMetrics}. */
export interface GatewayMetricsOptions {
  /** Each pool's leases in use and queue, read at each scrape; absent, the gauges stay empty. */
  capacity?: () => PoolUsage[];
}

/**
 * Prometheus metrics of the gateway: invocations by tool and status, stage latencies, capacity
 * (queue depth, leases in use), event-stream clients and storage errors.
 */
export class GatewayMetrics implements PipelineMetrics, StreamMetrics {
  readonly registry = new Registry();
  private readonly invocations = new Counter({
    name: 'gatehouse_invocations_total',
    help: 'Invocations whose outcome was decided, by tool and status.',
    labelNames: ['tool', 'status'] as const,
    registers: [this.registry],
  });
  private readonly stages = new Histogram({
    name: 'gatehouse_stage_seconds',
    help: 'Time spent in each pipeline stage.',
    labelNames: ['stage'] as const,
    buckets: [0.00001, 0.00005, 0.0001, 0.0005, 0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1, 5, 30],
    registers: [this.registry],
  });

  private readonly mcpRefusals = new Counter({
    name: 'gatehouse_mcp_refusals_total',
    help: 'Requests to /mcp refused before any tool ran (forged Host or Origin, bad token, foreign session, oversized body, unknown tool), by error code.',
    labelNames: ['code'] as const,
    registers: [this.registry],
  });

  /** Where the open stream count is read at each scrape (the server's event-stream hub). */
  private streamCount: (() => number) | null = null;

  private readonly queueDepth = new Gauge({
    name: 'gatehouse_queue_depth',
    help: 'Calls waiting in line for execution capacity, by pool.',
    labelNames: ['pool'] as const,
    registers: [this.registry],
  });

  private readonly leasesInUse = new Gauge({
    name: 'gatehouse_leases_in_use',
    help: 'Sandbox leases held now, by pool.',
    labelNames: ['pool'] as const,
    registers: [this.registry],
  });

  private readonly streamDrops = new Counter({
    name: 'gatehouse_event_stream_dropped_total',
    help: 'Event streams the gateway closed: behind (more unread than the buffer bound), stalled (took nothing for the stall time), failed (the outbox could not be read).',
    labelNames: ['reason'] as const,
    registers: [this.registry],
  });

  private readonly connectionDrops = new Counter({
    name: 'gatehouse_connections_dropped_total',
    help: 'Connections closed as they arrived because the gateway held its maximum.',
    registers: [this.registry],
  });

  private readonly storageErrors = new Counter({
    name: 'gatehouse_storage_errors_total',
    help: 'Writes the database refused (disk full, I/O error, locked…), by SQLite error code.',
    labelNames: ['code'] as const,
    registers: [this.registry],
  });

  private readonly mcpSessions = new Gauge({
    name: 'gatehouse_mcp_sessions',
    help: 'Open sessions of the agents’ MCP endpoint (each ends with its token: revoked, rotated out or expired).',
    registers: [this.registry],
  });

  constructor(private readonly options: GatewayMetricsOptions = {}) {
    collectDefaultMetrics({ register: this.registry, prefix: 'gatehouse_' });
    const count = () => this.streamCount?.() ?? 0;
    // Read at each scrape, so the gauge costs nothing between scrapes.
    new Gauge({
      name: 'gatehouse_event_stream_clients',
      help: 'Open /v1/events/stream clients.',
      registers: [this.registry],
      collect() {
        this.set(count());
      },
    });
  }

  /** Where the open event streams are counted (the server's hub), read at each scrape. */
  countStreams(count: () => number): void {
    this.streamCount = count;
  }

  /** The database refused a write with this error code. */
  storageError(code: string): void {
    this.storageErrors.inc({ code });
  }

  stage(name: StageName, seconds: number): void {
    this.stages.observe({ stage: name }, seconds);
  }

  outcome(tool: string, status: InvocationStatus): void {
    this.invocations.inc({ tool, status });
  }

  /** A request to /mcp refused at the edge. */
  mcpRefused(code: string): void {
    this.mcpRefusals.inc({ code });
  }

  streamDropped(reason: StreamDropReason): void {
    this.streamDrops.inc({ reason });
  }

  /** A connection refused because the gateway held `maxConnections`. */
  connectionDropped(): void {
    this.connectionDrops.inc();
  }

  /** The number of open /mcp sessions, after each change. */
  mcpSessionsOpen(count: number): void {
    this.mcpSessions.set(count);
  }

  /**
   * The text exposition format: one scrape. Capacity is read once for both of its gauges, so
   * they describe the same moment and the pools are walked once.
   */
  text(): Promise<string> {
    const usage = this.options.capacity?.() ?? [];
    for (const u of usage) {
      this.queueDepth.set({ pool: u.pool.name }, u.queued);
      this.leasesInUse.set({ pool: u.pool.name }, u.used.leases);
    }
    return this.registry.metrics();
  }
}
