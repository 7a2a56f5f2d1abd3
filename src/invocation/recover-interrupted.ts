import { EventType, FailureCode, isoTime } from '../core/index.js';
import type { Clock } from '../core/index.js';
import { signReceipt } from '../audit/index.js';
import type { Signer } from '../audit/index.js';
import type { InvocationRecord } from './invocation-record.js';
import { transitionInvocation } from './invocation-status.js';
import type { InvocationStore } from './invocation-store.js';
import { receiptPredicate } from './receipt-predicate.js';
import { invocationAudit, invocationEvent, invocationSummary } from './invocation-ledger.js';
import type { TraceEntry } from './stage.js';
import { judgeExecution } from './execution-verdict.js';

/**
 * At start: every invocation left `running` by a stopped or crashed Gatehouse may have had its
 * effect, so (a write, as every call stored `running` is) it becomes `uncertain` (with a
 * `ToolEffectUncertain` event and a receipt); every one left `queued` never started, so it becomes
 * `failed`, retryable. {@link judgeExecution} decides which. Safe to repeat.
 * @returns the invocations it marked.
 */
export async function recoverInterrupted(o: {
  store: InvocationStore;
  signer: Signer;
  clock: Clock;
}): Promise<InvocationRecord[]> {
  const running = await o.store.listByStatus('running');
  const queued = await o.store.listByStatus('queued');
  for (const record of running) {
    await settle(o, record, {
      code: FailureCode.GATEWAY_RESTARTED,
      message: 'Gatehouse stopped while this call was running',
      effectMayHaveStarted: true,
      uncertainNote: 'its effect may have happened and was not confirmed',
    });
  }
  for (const record of queued) {
    await settle(o, record, {
      code: FailureCode.QUEUE_INTERRUPTED,
      message:
        'Gatehouse stopped while this call waited for capacity; nothing ran — retry it with the same key',
      effectMayHaveStarted: false,
    });
  }
  return [...running, ...queued];
}

/**
 * What is known of a call whose pass ended unrecorded: left `running` (it may have started
 * acting) or `queued` (nothing ran).
 */
export interface Interruption {
  code: FailureCode;
  message: string;
  effectMayHaveStarted: boolean;
  /** Why an effect may have happened, said after the message when the call is uncertain. */
  uncertainNote?: string;
}

/**
 * Settles one invocation left `running` or `queued` as {@link judgeExecution} judges the
 * interruption for its effective class (`uncertain` or `failed`), with a receipt and its audit
 * record; `when` says when (default: at restart).
 * @throws when the store cannot record it (the record stays as it was).
 */
export async function settle(
  o: { store: InvocationStore; signer: Signer; clock: Clock },
  record: InvocationRecord,
  interruption: Interruption,
  when = 'at restart',
): Promise<void> {
  // A call is classified before it runs; one without a class is taken as able to act.
  const { status, code, message } = judgeExecution(
    { status: 'stopped', ...interruption },
    record.effectiveClass ?? 'production',
  );
  const at = isoTime(o.clock.now());
  const entries: TraceEntry[] = [
    {
      stage: interruption.effectMayHaveStarted ? 'execute' : 'sandbox',
      decision: status === 'uncertain' ? 'uncertain' : 'fail',
      reason: message,
      at,
    },
    {
      stage: 'audit',
      decision: 'recorded',
      reason: `audit record appended and receipt signed ${when}`,
      at,
    },
  ];
  record.status = transitionInvocation(record.status, status);
  record.trace.push(...entries);
  record.error = { code, message, stage: entries[0]!.stage };
  record.updatedAt = at;
  record.completedAt = at;
  const summary = invocationSummary(record, status);
  await o.store.save({
    record,
    ledger: {
      audit: [
        invocationAudit(record, `invocation.${status}`, at, 'system', {
          ...summary,
          stages: entries,
          error: record.error,
        }),
      ],
      events: [
        invocationEvent(
          record,
          status === 'uncertain'
            ? EventType.ToolEffectUncertain
            : EventType.ToolInvocationCompleted,
          at,
          {
            ...summary,
            error: record.error,
          },
        ),
      ],
    },
    seal: (last) => signReceipt(receiptPredicate({ ...record, audit: last }), o.signer),
  });
}
