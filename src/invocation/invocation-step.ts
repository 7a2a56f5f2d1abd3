import type { AuditRecordDraft, EventType } from '../core/index.js';
import { signReceipt } from '../audit/index.js';
import type { Signer } from '../audit/index.js';
import { invocationAudit, invocationEvent } from './invocation-ledger.js';
import type { InvocationRecord } from './invocation-record.js';
import { hasOutcome, transitionInvocation } from './invocation-status.js';
import type { InvocationStatus } from './invocation-status.js';
import type { InvocationStep } from './invocation-store.js';
import { receiptPredicate } from './receipt-predicate.js';

/** What one durable step of an invocation says, beside its record. */
export interface StepParts {
  /** The record as it is to be stored (already in its new status). */
  record: InvocationRecord;
  /** When the step happens (ISO 8601). */
  at: string;
  /** Who caused it: the calling principal, an operator, or `system`. */
  actor: string;
  /** Its own audit record: `type` (e.g. `invocation.observed`) and data. */
  audit: { type: string; data: Record<string, unknown> };
  /** Audit records of the call's parts (credential leases) written first, in the same commit. */
  before?: readonly AuditRecordDraft[];
  /** The outbox events it publishes, in order. */
  events: readonly { type: EventType; data: Record<string, unknown> }[];
  /** Signs a receipt over the record and the audit record's position; set when the step decides or changes the outcome. */
  signer?: Signer;
}

/**
 * Every durable step of an invocation — a pipeline stage that records, the settling of calls a
 * stop interrupted, an operator's resolution — is built here (as Temporal funnels every state
 * change through one setter): the record, its audit record, its events and, for a step that
 * decides the outcome, the receipt sealed inside the same transaction.
 */
export function invocationStep(p: StepParts): InvocationStep {
  const { record, at } = p;
  const step: InvocationStep = {
    record,
    ledger: {
      audit: [
        ...(p.before ?? []),
        invocationAudit(record, p.audit.type, at, p.actor, p.audit.data),
      ],
      events: p.events.map((e) => invocationEvent(record, e.type, at, e.data)),
    },
  };
  const signer = p.signer;
  if (signer)
    step.seal = (last) => signReceipt(receiptPredicate({ ...record, audit: last }), signer);
  return step;
}

/**
 * Moves `record` from `from` to `status` at `at` (a transition the lifecycle allows). A status
 * that decides the outcome also sets `completedAt` and adds the `audit` trace entry that says the
 * audit record and receipt are written with it (`when`, e.g. `at restart`, ends its reason).
 * @returns whether the new status decides the outcome (the step then needs a receipt).
 * @throws when the lifecycle does not allow the transition.
 */
export function enterStatus(
  record: InvocationRecord,
  from: InvocationStatus | 'new',
  status: InvocationStatus,
  at: string,
  when?: string,
): boolean {
  record.status = transitionInvocation(from, status);
  record.updatedAt = at;
  const final = hasOutcome(status);
  if (final) {
    record.completedAt = at;
    record.trace.push({
      stage: 'audit',
      decision: 'recorded',
      reason: `audit record appended and receipt signed${when ? ` ${when}` : ''}`,
      at,
    });
  }
  return final;
}
