import { checkAgentPermission } from '../../policy/index.js';
import { toolRef } from '../../tools/index.js';
import type { ValidatedContext } from '../pipeline-context.js';
import type { StageResult } from '../stage.js';

/**
 * Stage 2: the tool version is in the agent release's closure and has not been revoked.
 * A deprecated version pinned by the closure stays callable, with a warning.
 */
export function permissionStage(ctx: ValidatedContext): StageResult {
  const { record } = ctx;
  const agent = `${record.agent.id}@${record.agent.version}`;
  if (!ctx.release) {
    return {
      outcome: 'deny',
      code: 'PERMISSION_DENIED',
      reason: `Agent release ${agent} is not published in tenant ${record.tenant}; publish it (AgentReleasePublished) before its agents call tools.`,
    };
  }
  const permitted = checkAgentPermission(ctx.release.release, record.tool);
  if (!permitted.allowed)
    return { outcome: 'deny', code: 'PERMISSION_DENIED', reason: permitted.reason };
  const stored = ctx.tool.stored;
  if (stored.state === 'revoked') {
    return {
      outcome: 'deny',
      code: 'TOOL_REVOKED',
      reason: `${toolRef(record.tool)} was revoked${stored.stateReason ? ` (${stored.stateReason})` : ''}; no new invocation may use it.`,
    };
  }
  if (stored.state === 'deprecated') {
    const warning = `${toolRef(record.tool)} is deprecated${stored.stateReason ? ` (${stored.stateReason})` : ''}; move to a newer version.`;
    record.warnings.push(warning);
    return {
      outcome: 'continue',
      reason: `in the release closure of ${agent}; ${warning}`,
      details: { deprecated: true },
    };
  }
  return { outcome: 'continue', reason: `in the release closure of ${agent}` };
}
