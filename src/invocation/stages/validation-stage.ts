import { JsonSchemaValidator, knownVersionsText, toolRef } from '../../tools/index.js';
import type { KnownVersion } from '../../tools/index.js';
import type { PipelineContext } from '../pipeline-context.js';
import type { StageResult } from '../stage.js';

/** What the validation stage reads of the tenant, only to say what exists when a name is wrong. */
export interface KnownNames {
  /** The environments of the call's project. */
  environments: () => string[];
  /** The published versions of the call's tool id. */
  versions: () => KnownVersion[];
}

/**
 * Stage 1: the request names a known tool and environment, and the input satisfies the tool's
 * input schema; a denial lists every violation with its JSON pointer, and an unknown tool or
 * environment names those that exist.
 */
export function validationStage(ctx: PipelineContext, known: KnownNames): StageResult {
  const { record } = ctx;
  if (!ctx.tool) {
    const versions = known.versions();
    return {
      outcome: 'deny',
      code: 'UNKNOWN_TOOL',
      reason: `Tool ${toolRef(record.tool)} is not published in tenant ${record.tenant} (${knownVersionsText(record.tool.id, versions)}); call a tool of your release closure (GET /v1/tools).`,
      details: { tool: record.tool.id, versions: versions.map((v) => v.version) },
    };
  }
  if (!ctx.environment) {
    const environments = known.environments();
    return {
      outcome: 'deny',
      code: 'UNKNOWN_ENVIRONMENT',
      reason: `Environment ${JSON.stringify(record.environment)} does not exist in project ${record.project}; use one of: ${environments.join(', ') || '(none)'}.`,
      details: { known: environments },
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
