import { EventType, FailureCode, isoTime } from '../core/index.js';
import type { Clock } from '../core/index.js';
import type { Signer } from '../audit/index.js';
import type { InvocationRecord } from './invocation-record.js';
import type { InvocationStore } from './invocation-store.js';
import { invocationSummary } from './invocation-ledger.js';
import { enterStatus, invocationStep } from './invocation-step.js';
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
  const stage = interruption.effectMayHaveStarted ? 'execute' : 'sandbox';
  const from = record.status;
  const first = record.trace.length;
  record.trace.push({
    stage,
    decision: status === 'uncertain' ? 'uncertain' : 'fail',
    reason: message,
    at,
  });
  record.error = { code, message, stage };
  enterStatus(record, from, status, at, when);
  const summary = invocationSummary(record, status);
  const error = { error: record.error };
  await o.store.save(
    invocationStep({
      record,
      at,
      actor: 'system',
      audit: {
        type: `invocation.${status}`,
        data: { ...summary, stages: record.trace.slice(first), ...error },
      },
      events: [
        {
          type:
            status === 'uncertain'
              ? EventType.ToolEffectUncertain
              : EventType.ToolInvocationCompleted,
          data: { ...summary, ...error },
        },
      ],
      signer: o.signer,
    }),
  );
}
