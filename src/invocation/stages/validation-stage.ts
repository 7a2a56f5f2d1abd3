import { JsonSchemaValidator, toolRef } from '../../tools/index.js';
import type { PipelineContext } from '../pipeline-context.js';
import type { StageResult } from '../stage.js';

/**
 * Stage 1: the request names a known tool and environment, and the input satisfies the tool's
 * input schema; a denial lists every violation with its JSON pointer.
 */
export function validationStage(
  ctx: PipelineContext,
  knownEnvironments: () => string[],
): StageResult {
  const { record } = ctx;
  if (!ctx.tool) {
    return {
      outcome: 'deny',
      code: 'UNKNOWN_TOOL',
      reason: `Tool ${toolRef(record.tool)} is not published in tenant ${record.tenant}; call a tool of your release closure (GET /v1/tools).`,
    };
  }
  if (!ctx.environment) {
    const known = knownEnvironments();
    return {
      outcome: 'deny',
      code: 'UNKNOWN_ENVIRONMENT',
      reason: `Environment ${JSON.stringify(record.environment)} does not exist in project ${record.project}; use one of: ${known.join(', ') || '(none)'}.`,
      details: { known },
    };
  }
  const violations = JsonSchemaValidator.violations(ctx.tool.validateInput, record.input);
  if (violations.length > 0) {
    const list = violations.map((v) => `${v.pointer || '/'} ${v.message}`).join('; ');
    return {
      outcome: 'deny',
      code: 'INVALID_INPUT',
      reason: `Input does not match the input schema of ${toolRef(record.tool)}: ${list}.`,
      details: { violations },
    };
  }
  return { outcome: 'continue', reason: 'input matches the input schema' };
}
