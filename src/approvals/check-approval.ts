import type { DenialCode, ErrorCode } from '../core/index.js';
import type { Approval } from './approval.js';
import { isExpired } from './approval.js';

/** What a resumed call presents an approval for. */
export interface ApprovalUse {
  tenant: string;
  invocationId: string;
  requestHash: string;
  tool: { id: string; version: string };
  descriptorDigest: string | null;
}

/** What is wrong with using an approval: a refusal (a request error) or a denial of the call. */
export type ApprovalProblem =
  | {
      kind: 'refuse';
      code:
        | typeof ErrorCode.APPROVAL_STALE
        | typeof ErrorCode.APPROVAL_CONSUMED
        | typeof ErrorCode.APPROVAL_PENDING;
      message: string;
    }
  | {
      kind: 'deny';
      code:
        | typeof DenialCode.APPROVAL_EXPIRED
        | typeof DenialCode.APPROVAL_REJECTED
        | typeof DenialCode.APPROVAL_INVALIDATED;
      message: string;
    };

/**
 * Why an approval cannot let this call proceed, or null when it can.
 * `refuse` problems are answered with a 4xx and change nothing (the approval belongs to another
 * request, is consumed or still pending); `deny` problems end the waiting call `denied`.
 */
export function checkApproval(a: Approval, use: ApprovalUse, now: number): ApprovalProblem | null {
  if (a.tool.id !== use.tool.id || a.tool.version !== use.tool.version) {
    return {
      kind: 'refuse',
      code: 'APPROVAL_STALE',
      message: `Approval ${a.id} is for ${a.tool.id}@${a.tool.version}, not ${use.tool.id}@${use.tool.version}: it is stale for this call, which needs its own approval.`,
    };
  }
  if (a.requestHash !== use.requestHash) {
    return {
      kind: 'refuse',
      code: 'APPROVAL_STALE',
      message: `Approval ${a.id} is stale: it approves request hash ${a.requestHash}, and this request's hash is ${use.requestHash} — the input, environment or agent changed, so the call needs a new approval.`,
    };
  }
  if (use.descriptorDigest !== null && a.descriptorDigest !== use.descriptorDigest) {
    return {
      kind: 'refuse',
      code: 'APPROVAL_STALE',
      message: `Approval ${a.id} was given for descriptor digest ${a.descriptorDigest}, not ${use.descriptorDigest}.`,
    };
  }
  if (a.invocationId !== use.invocationId) {
    if (a.status === 'consumed') {
      return {
        kind: 'refuse',
        code: 'APPROVAL_CONSUMED',
        message: `Approval ${a.id} was already used by invocation ${a.invocationId} at ${a.consumedAt ?? '?'}; an approval lets one call run once.`,
      };
    }
    return {
      kind: 'refuse',
      code: 'APPROVAL_STALE',
      message: `Approval ${a.id} belongs to invocation ${a.invocationId}; resume that invocation with its own Idempotency-Key.`,
    };
  }
  switch (a.status) {
    case 'approved':
      if (isExpired(a, now))
        return {
          kind: 'deny',
          code: 'APPROVAL_EXPIRED',
          message: `Approval ${a.id} expired at ${a.expiresAt} before it was used.`,
        };
      return null;
    case 'pending':
      if (isExpired(a, now))
        return {
          kind: 'deny',
          code: 'APPROVAL_EXPIRED',
          message: `Approval ${a.id} expired at ${a.expiresAt} without a decision.`,
        };
      return {
        kind: 'refuse',
        code: 'APPROVAL_PENDING',
        message: `Approval ${a.id} is still pending (${a.decisions.filter((d) => d.decision === 'approve').length} of ${a.quorum} approvals); invoke again once it is approved.`,
      };
    case 'rejected': {
      const by = a.decisions.find((d) => d.decision === 'reject');
      return {
        kind: 'deny',
        code: 'APPROVAL_REJECTED',
        message: `Approval ${a.id} was rejected${by ? ` by ${by.principal}: ${by.reason}` : ''}.`,
      };
    }
    case 'expired':
      return {
        kind: 'deny',
        code: 'APPROVAL_EXPIRED',
        message: `Approval ${a.id} expired at ${a.expiresAt}.`,
      };
    case 'invalidated':
      return {
        kind: 'deny',
        code: 'APPROVAL_INVALIDATED',
        message: `Approval ${a.id} was invalidated: ${a.statusReason ?? 'its tool version was revoked'}.`,
      };
    case 'consumed':
      return {
        kind: 'refuse',
        code: 'APPROVAL_CONSUMED',
        message: `Approval ${a.id} was already used at ${a.consumedAt ?? '?'}; an approval lets one call run once.`,
      };
  }
}
