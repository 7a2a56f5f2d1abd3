import { isGatehouseError } from '../../core/index.js';
import { Redactor } from '../../secrets/index.js';
import type { CredentialBroker, CredentialNeed } from '../../secrets/index.js';
import type { ValidatedContext } from '../pipeline-context.js';
import type { StageResult } from '../stage.js';

/**
 * Stage 6: the credential broker issues the credentials the descriptor declares, as leases
 * scoped to this invocation with a TTL no longer than its timeout, revoked when the call ends.
 * Any broker failure fails closed: the call ends `failed` before any effect, nothing spawned.
 * The issue's audit record joins the call's next save, which comes before it executes (the
 * pipeline records a call holding credentials `running` first); the save that decides the
 * outcome ends the leases and writes their revocation with it.
 */
export async function credentialsStage(
  ctx: ValidatedContext,
  broker: CredentialBroker | undefined,
  timeoutMs: number,
): Promise<StageResult> {
  const needs = (ctx.tool.stored.descriptor.credentials ?? []) as unknown as CredentialNeed[];
  if (needs.length === 0)
    return {
      outcome: 'continue',
      decision: 'not-required',
      reason: 'the descriptor declares no credentials',
    };
  if (!broker) {
    return {
      outcome: 'fail',
      code: 'CREDENTIAL_UNAVAILABLE',
      reason: `${needs.length} credential(s) declared but this gateway has no credential broker; failing closed before any effect.`,
    };
  }
  const id = ctx.record.id;
  try {
    const { issued, audit } = await broker.issueRecorded(ctx.record.tenant, id, needs, timeoutMs);
    ctx.credentials = issued;
    if (audit) ctx.pendingAudit.push(audit);
    ctx.redactor = new Redactor(issued.values);
    ctx.cleanup.push(() => broker.revoke(id));
    const list = issued.leases.map((l) => `${l.ref} (${l.scope}, v${l.version})`).join(', ');
    return {
      outcome: 'continue',
      reason: `issued ${issued.leases.length} credential lease(s) until ${issued.leases[0]?.expiresAt ?? '?'}: ${list}`,
      details: { leases: issued.leases },
    };
  } catch (err) {
    await broker.revoke(id).catch(() => undefined);
    if (isGatehouseError(err))
      return {
        outcome: 'fail',
        code: err.code,
        reason: `${err.message} Failing closed before any effect.`,
      };
    return {
      outcome: 'fail',
      code: 'CREDENTIAL_UNAVAILABLE',
      reason: 'the credential broker failed; failing closed before any effect.',
    };
  }
}
