import type { PolicyAction, PolicyRequest, TenantPolicy } from '../../policy/index.js';
import type { ClassifiedContext } from '../pipeline-context.js';
import type { StageResult } from '../stage.js';

/**
 * Stage 3: tenant and project policy in Cedar. The request carries the agent, the tool, the
 * environment and its class, the effective class and the input, so a policy can forbid by argument.
 */
export function policyStage(ctx: ClassifiedContext, policy: TenantPolicy): StageResult {
  const decision = policy.evaluate(policyRequest(ctx, 'invoke'));
  const details = { determiningPolicies: decision.determiningPolicies, cached: decision.cached };
  if (decision.decision === 'deny') {
    return { outcome: 'deny', code: 'POLICY_DENIED', reason: decision.reason, details };
  }
  return { outcome: 'continue', reason: decision.reason, details };
}

/** The question a stage puts to tenant policy about this call. */
export function policyRequest(ctx: ClassifiedContext, action: PolicyAction): PolicyRequest {
  const { record } = ctx;
  const tool = ctx.tool.stored.descriptor;
  return {
    tenant: record.tenant,
    project: record.project,
    environment: ctx.environment,
    agent: record.agent,
    tool: {
      id: tool.id,
      version: tool.version,
      kind: tool.kind,
      declaredClass: tool.sideEffect.class,
    },
    effectiveClass: ctx.classification.effectiveClass,
    input: record.input,
    action,
  };
}
