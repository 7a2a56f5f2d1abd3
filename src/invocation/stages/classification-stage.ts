import type { ClassifiedContext } from '../pipeline-context.js';
import type { StageResult } from '../stage.js';

/**
 * Stage 4: records the effective side-effect class (computed before policy, which needs it) and
 * refuses `shared-write` and `production` calls into a frozen environment.
 */
export function classificationStage(ctx: ClassifiedContext): StageResult {
  const c = ctx.classification;
  const details = {
    declaredClass: c.declaredClass,
    effectiveClass: c.effectiveClass,
    raisedBy: c.raisedBy,
  };
  if (c.frozenDenial !== null) {
    return { outcome: 'deny', code: 'ENVIRONMENT_FROZEN', reason: c.frozenDenial, details };
  }
  const raised = c.raisedBy.map((r) => r.reason).join('; ');
  return {
    outcome: 'continue',
    reason:
      c.effectiveClass === c.declaredClass
        ? `effective class ${c.effectiveClass} (as declared)`
        : `effective class ${c.effectiveClass}, raised from ${c.declaredClass}: ${raised}`,
    details,
  };
}
