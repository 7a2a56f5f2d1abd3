import { isoTime } from '../../core/index.js';
import type { Clock, EnvironmentClass, IdGenerator } from '../../core/index.js';
import type { Approval } from '../../approvals/index.js';
import type { TenantPolicy } from '../../policy/index.js';
import type { ClassifiedContext } from '../pipeline-context.js';
import type { StageResult } from '../stage.js';
import { policyRequest } from './policy-stage.js';

/** How approval requests are made. */
export interface ApprovalSettings {
  /** How long an approval request stays valid (default 24 h). */
  ttlMs: number;
  /** Approvals needed per environment class (default 1 each). */
  quorum: Record<EnvironmentClass, number>;
  ids: IdGenerator;
  clock: Clock;
}

/**
 * Stage 5: a call that tenant policy does not permit to run unattended (`invokeUnattended`)
 * waits for a reviewer: the stage suspends and leaves an approval request, bound to the request
 * hash, tool version and descriptor digest, for the pipeline to store. A resumed call passes
 * with the approval it presented.
 */
export function approvalStage(
  ctx: ClassifiedContext,
  policy: TenantPolicy,
  settings: ApprovalSettings,
): StageResult {
  if (ctx.approved) {
    const a = ctx.approved;
    const approvers = a.decisions.filter((d) => d.decision === 'approve').map((d) => d.principal);
    return {
      outcome: 'continue',
      reason: `approved by ${approvers.join(', ')} at ${a.decidedAt ?? '?'} (approval ${a.id}); the approval is consumed`,
      details: { approvalId: a.id, approvers },
    };
  }
  const decision = policy.evaluate(policyRequest(ctx, 'invokeUnattended'));
  const details = { determiningPolicies: decision.determiningPolicies };
  if (decision.decision === 'allow') {
    return {
      outcome: 'continue',
      decision: 'not-required',
      reason: `no approval required: ${decision.reason}`,
      details,
    };
  }
  const { record } = ctx;
  const env = ctx.environment;
  const now = settings.clock.now();
  const effectiveClass = ctx.classification.effectiveClass;
  const reason = `a ${effectiveClass} call in ${env.class} environment ${env.name} needs a reviewer's approval (no policy permits it to run unattended)`;
  const approval: Approval = {
    id: settings.ids.next(),
    tenant: record.tenant,
    project: record.project,
    environment: env.name,
    environmentClass: env.class,
    invocationId: record.id,
    requestHash: record.requestHash,
    tool: { id: record.tool.id, version: record.tool.version },
    descriptorDigest: ctx.tool.stored.digest,
    effectiveClass,
    requestedBy: record.principal,
    reason,
    input: record.input,
    requestedAt: isoTime(now),
    expiresAt: isoTime(now + settings.ttlMs),
    quorum: settings.quorum[env.class],
    status: 'pending',
    version: 1,
    decisions: [],
    decidedAt: null,
    consumedAt: null,
    statusReason: null,
  };
  ctx.pendingApproval = approval;
  record.approvalId = approval.id;
  return {
    outcome: 'suspend',
    reason: `${reason}; approval ${approval.id} requested, expires ${approval.expiresAt}`,
    details: {
      ...details,
      approvalId: approval.id,
      expiresAt: approval.expiresAt,
      quorum: approval.quorum,
    },
  };
}
