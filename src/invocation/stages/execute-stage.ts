import { Redactor } from '../../secrets/index.js';
import type { Executor, ExecutionResult } from '../executor.js';
import type { CallerInteraction } from '../invocation-telemetry.js';
import { judgeExecution } from '../execution-verdict.js';
import type { OutputCapture } from '../output-capture.js';
import type { ClassifiedContext } from '../pipeline-context.js';
import type { StageResult } from '../stage.js';

/**
 * Stage 8: runs the call with the executor of its kind, under the descriptor's timeout. The
 * outcome (observed, failed, uncertain), judged from the executor's report and the call's
 * effective class, is left on the context for sanitizing and the receipt.
 */
export async function executeStage(
  ctx: ClassifiedContext,
  executors: ReadonlyMap<string, Executor>,
  timeoutMs: number,
  capture: () => OutputCapture,
  storeArtifact?: (bytes: Uint8Array) => Promise<string>,
): Promise<StageResult> {
  const descriptor = ctx.tool.stored.descriptor;
  const executor = executors.get(descriptor.kind);
  const effectiveClass = ctx.classification.effectiveClass;
  if (!executor) {
    ctx.execution = judgeExecution(
      {
        status: 'stopped',
        code: 'NO_EXECUTOR',
        message: `no executor for kind ${descriptor.kind} is configured`,
        effectMayHaveStarted: false,
      },
      effectiveClass,
    );
    return { outcome: 'continue', reason: ctx.execution.message };
  }
  const signal = ctx.controller.signal;
  const timer = setTimeout(
    () => ctx.controller.abort(new DOMException(`timed out after ${timeoutMs} ms`, 'TimeoutError')),
    timeoutMs,
  );
  const { record } = ctx;
  const interactions: CallerInteraction[] = [];
  const report = await executor
    .execute({
      invocationId: record.id,
      tenant: record.tenant,
      project: record.project,
      environment: ctx.environment,
      agent: record.agent,
      descriptor,
      input: record.input,
      requestHash: record.requestHash,
      idempotencyKey: record.idempotencyKey,
      effectiveClass,
      signal,
      timeoutMs,
      ...(ctx.held ? { lease: ctx.held.execution } : {}),
      ...(ctx.credentials ? { headers: ctx.credentials.headers } : {}),
      onEgress: (decision) => ctx.egress.push(decision),
      onInteraction: (i) => interactions.push(i),
      ...(storeArtifact ? { storeArtifact } : {}),
      ...(ctx.telemetry?.caller ? { caller: ctx.telemetry.caller } : {}),
      capture: () => {
        const c = capture();
        ctx.captures.push(c);
        return c;
      },
      redact: (value) => {
        const r = ctx.redactor.redactJson(value);
        ctx.executorRemovals.push(...r.removals);
        return r.value;
      },
      redactAlso: (values, redactor) => {
        // The connection's secrets join the call's, so sanitizing removes them from output and errors.
        if (values.length === 0) return;
        const own = ctx.credentials?.values ?? [];
        ctx.redactor = own.length === 0 && redactor ? redactor : new Redactor([...own, ...values]);
      },
    })
    .finally(() => clearTimeout(timer));
  const result = judgeExecution(report, effectiveClass);
  ctx.execution = result;
  const egress = ctx.egress;
  const notes = [describe(result)];
  const details: Record<string, unknown> = {};
  if (egress.length > 0) {
    const refused = egress.filter((d) => !d.allowed).length;
    notes.push(`egress: ${egress.length - refused} connection(s) allowed, ${refused} refused`);
    details.egress = egress;
  }
  if (interactions.length > 0) {
    const answered = interactions.filter((i) => i.outcome === 'answered').length;
    notes.push(
      `requests of the tool to the caller: ${answered} answered, ${interactions.length - answered} not`,
    );
    details.interactions = interactions;
  }
  return {
    outcome: 'continue',
    reason: notes.join('; '),
    ...(Object.keys(details).length > 0 ? { details } : {}),
  };
}

function describe(r: ExecutionResult): string {
  switch (r.status) {
    case 'observed':
      return 'the tool ran and its output was seen';
    case 'failed':
      return `the tool failed before any effect: ${r.message}`;
    case 'uncertain':
      return `an effect may have happened: ${r.message}`;
  }
}
