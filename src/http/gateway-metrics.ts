import { Counter, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import type { InvocationStatus, PipelineMetrics, StageName } from '../invocation/index.js';

/** Prometheus metrics of the gateway: invocations by tool and status, stage latencies. */
export class GatewayMetrics implements PipelineMetrics {
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

  constructor() {
    collectDefaultMetrics({ register: this.registry, prefix: 'gatehouse_' });
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

  /** The text exposition format. */
  text(): Promise<string> {
    return this.registry.metrics();
  }
}
