import { isGatehouseError } from '../../core/index.js';
import type { PipelineContext } from '../pipeline-context.js';
import type { SandboxLeases } from '../sandbox-leases.js';
import type { StageResult } from '../stage.js';

/**
 * Kinds that take no lease per call, and why: native tools run in the gateway process; MCP tools
 * run in their upstream server, a long-lived process of its own.
 */
const NO_LEASE: Record<string, string> = {
  native: 'native tools run in the gateway process',
  mcp: 'MCP tools run in their upstream server, not in a per-call sandbox',
  http: 'HTTP tools are requests the gateway sends through its checked egress',
};

/**
 * Stage 7: a lease of execution capacity with its limits, workspace and egress allow-list.
 * When capacity is short the call waits (`queued`) within its budget, then fails as a transient,
 * retryable failure before any effect.
 */
export async function sandboxStage(
  ctx: PipelineContext,
  leases: SandboxLeases | undefined,
  timeoutMs: number,
): Promise<StageResult> {
  const d = ctx.tool!.stored.descriptor;
  const why = NO_LEASE[d.kind];
  if (why !== undefined)
    return { outcome: 'continue', decision: 'not-required', reason: `no lease required: ${why}` };
  if (!leases)
    return {
      outcome: 'fail',
      code: 'SANDBOX_UNAVAILABLE',
      reason: `${d.kind} tools run in a sandbox, and this gateway has none (see /readyz); nothing ran.`,
    };
  const { record } = ctx;
  try {
    const held = await leases.hold({
      tenant: record.tenant,
      agent: record.principal,
      invocationId: record.id,
      runId: record.runId,
      attemptId: record.attemptId,
      needs: d.sandbox ?? {},
      timeoutMs,
      credentials: ctx.credentials ?? { env: {}, files: [], leases: [] },
      signal: ctx.controller.signal,
      onQueued: () => ctx.markQueued(),
      onEgress: (decision) => ctx.egress.push(decision),
    });
    ctx.held = held;
    ctx.cleanup.push(() => held.done());
    const l = held.lease;
    record.lease = {
      id: l.id,
      pool: l.pool,
      holder: l.holder,
      resources: l.resources,
      timeoutMs,
      readOnlyMounts: l.readOnlyMounts.map((m) => m.sandbox),
      egressAllow: l.egressAllow,
      credentials: (ctx.credentials?.leases ?? []).map((c) => ({
        id: c.id,
        ref: c.ref,
        scope: c.scope,
        expiresAt: c.expiresAt,
      })),
      worktree: l.worktree,
    };
    const mib = Math.round(l.resources.memoryBytes / 1024 / 1024);
    return {
      outcome: 'continue',
      reason: `lease ${l.id} in pool ${l.pool}: ${l.resources.cpus} CPU, ${mib} MiB, ${l.resources.pids} pids, ${l.resources.gpus} GPU, timeout ${timeoutMs} ms; egress only to ${l.egressAllow.join(', ') || 'nowhere'}`,
      details: { lease: record.lease },
    };
  } catch (err) {
    if (isGatehouseError(err))
      return {
        outcome: 'fail',
        code: err.code,
        reason: err.message,
        ...(Object.keys(err.details).length > 0 ? { details: err.details } : {}),
      };
    throw err;
  }
}
