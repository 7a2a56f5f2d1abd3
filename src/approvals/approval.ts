import { transition } from '../core/index.js';
import type { EnvironmentClass, SideEffectClass, Transitions } from '../core/index.js';

/** Lifecycle of an approval request (DESIGN §3, "Gated calls"). */
export const ApprovalStatus = {
  pending: 'pending',
  approved: 'approved',
  rejected: 'rejected',
  expired: 'expired',
  consumed: 'consumed',
  invalidated: 'invalidated',
} as const;
export type ApprovalStatus = (typeof ApprovalStatus)[keyof typeof ApprovalStatus];

const transitions: Transitions<ApprovalStatus> = {
  pending: ['approved', 'rejected', 'expired', 'invalidated'],
  approved: ['consumed', 'expired', 'invalidated'],
  rejected: [],
  expired: [],
  consumed: [],
  invalidated: [],
};

/**
 * The approval status after moving from `from` to `to`.
 * @throws IllegalStateError when the move is not in the table (callers check first).
 */
export function transitionApproval(from: ApprovalStatus, to: ApprovalStatus): ApprovalStatus {
  return transition('approval', transitions, from, to);
}

/** One reviewer's decision. */
export interface ApprovalDecision {
  principal: string;
  decision: 'approve' | 'reject';
  reason: string;
  at: string;
}

/**
 * A request for a person to approve one exact invocation: bound to its request hash, its tool
 * version and its descriptor digest, with an expiry and the principal that asked.
 */
export interface Approval {
  id: string;
  tenant: string;
  project: string;
  environment: string;
  environmentClass: EnvironmentClass;
  invocationId: string;
  requestHash: string;
  tool: { id: string; version: string };
  descriptorDigest: string;
  effectiveClass: SideEffectClass;
  /** The principal whose call needs approval; it can never approve it. */
  requestedBy: string;
  /** Why approval is needed. */
  reason: string;
  /** The call's input, so a reviewer sees exactly what runs. */
  input: unknown;
  requestedAt: string;
  expiresAt: string;
  /** Approvals needed before the call may run. */
  quorum: number;
  status: ApprovalStatus;
  /** Starts at 1; each update adds one (compare-and-set against concurrent decisions). */
  version: number;
  decisions: ApprovalDecision[];
  decidedAt: string | null;
  consumedAt: string | null;
  /** Why it was invalidated or expired. */
  statusReason: string | null;
}

/** True when the approval's expiry has passed at time `now` (ms). */
export function isExpired(a: Approval, now: number): boolean {
  return Date.parse(a.expiresAt) <= now;
}
