import { isGatehouseError } from '../../core/index.js';
import type { Executor } from '../executor.js';
import type { ValidatedContext } from '../pipeline-context.js';
import type { SandboxLeases } from '../sandbox-leases.js';
import type { StageResult } from '../stage.js';

/**
 * Stage 7: a lease of execution capacity with its limits, workspace and egress allow-list.
 * When capacity is short the call waits (`queued`) within its budget, then fails as a transient,
 * retryable failure before any effect. Whether a call needs a lease is its executor's
 * {@link Executor.lease}; a kind with no executor is taken to need one (the execute stage then
 * fails it).
 */
export async function sandboxStage(
  ctx: ValidatedContext,
  executors: ReadonlyMap<string, Executor>,
  leases: SandboxLeases | undefined,
  timeoutMs: number,
): Promise<StageResult> {
  const d = ctx.tool.stored.descriptor;
  const need = executors.get(d.kind)?.lease ?? { kind: 'sandbox' };
  if (need.kind === 'none')
    return {
      outcome: 'continue',
      decision: 'not-required',
      reason: `no lease required: ${need.why}`,
    };
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
      workspaceOnDemand: need.workspace === 'on-demand',
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
