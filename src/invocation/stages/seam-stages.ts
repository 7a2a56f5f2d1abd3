import type { PipelineContext } from '../pipeline-context.js';
import type { StageResult } from '../stage.js';

/**
 * Stages 6–7 (credential broker, sandbox) as they stand until the sandbox work fills them: each
 * records that it was not required for this call.
 */
export function credentialsStage(ctx: PipelineContext): StageResult {
  const wanted = ctx.tool!.stored.descriptor.credentials ?? [];
  if (wanted.length > 0) {
    return {
      outcome: 'fail',
      code: 'CREDENTIALS_UNAVAILABLE',
      reason: `${wanted.length} credential(s) declared but this gateway has no credential broker; failing closed before any effect.`,
    };
  }
  return {
    outcome: 'continue',
    decision: 'not-required',
    reason: 'the descriptor declares no credentials',
  };
}

/** Stage 7 until execution capacity exists: native tools run in-process without a lease. */
export function sandboxStage(ctx: PipelineContext): StageResult {
  return {
    outcome: 'continue',
    decision: 'not-required',
    reason: `no lease required: ${ctx.tool!.stored.descriptor.kind} tools run in the gateway process`,
  };
}
