import { transition } from '../core/index.js';

/** Invocation states (DESIGN §9). */
export const InvocationStatus = {
  denied: 'denied',
  awaitingApproval: 'awaiting_approval',
  queued: 'queued',
  running: 'running',
  failed: 'failed',
  uncertain: 'uncertain',
  observed: 'observed',
} as const;
export type InvocationStatus = (typeof InvocationStatus)[keyof typeof InvocationStatus];

/** `new` is the state of a request that has not been recorded yet. */
type From = InvocationStatus | 'new';

const transitions: Record<From, readonly InvocationStatus[]> = {
  new: ['denied', 'awaiting_approval', 'queued', 'running', 'failed', 'observed', 'uncertain'],
  awaiting_approval: ['denied', 'queued', 'running', 'failed', 'observed', 'uncertain'],
  queued: ['running', 'failed', 'observed', 'uncertain'],
  running: ['observed', 'failed', 'uncertain'],
  // An operator's resolution: confirmed → observed, denied → failed.
  uncertain: ['observed', 'failed'],
  denied: [],
  failed: [],
  observed: [],
};

/**
 * The state after moving an invocation from `from` to `to`. A call that never had to be recorded
 * before it ran (a `read` call) moves from `new` straight to its outcome.
 * @throws IllegalStateError when the move is not in the table.
 */
export function transitionInvocation(from: From, to: InvocationStatus): InvocationStatus {
  return transition('invocation', transitions, from, to);
}

/** True for states that carry a receipt: the call's outcome is decided (Uncertain until resolved). */
export function hasOutcome(status: InvocationStatus): boolean {
  return (
    status === 'denied' || status === 'failed' || status === 'observed' || status === 'uncertain'
  );
}
