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

/**
 * At start: every invocation left `running` by a stopped or crashed Gatehouse may have had its
 * effect, so it becomes `uncertain` (with a `ToolEffectUncertain` event and a receipt); every one
 * left `queued` never started, so it becomes `failed`, retryable. Safe to repeat.
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
    await settle(
      o,
      record,
      'uncertain',
      'GATEWAY_RESTARTED',
      'Gatehouse stopped while this call was running; its effect may have happened and was not confirmed',
    );
  }
  for (const record of queued) {
    await settle(
      o,
      record,
      'failed',
      FailureCode.QUEUE_INTERRUPTED,
      'Gatehouse stopped while this call waited for capacity; nothing ran — retry it with the same key',
    );
  }
  return [...running, ...queued];
}

/**
 * Settles one invocation left `running` (→ `uncertain`) or `queued` (→ `failed`) with `code` and
 * `reason`, a receipt and its audit record; `when` says when (default: at restart).
 * @throws when the store cannot record it (the record stays as it was).
 */
export async function settle(
  o: { store: InvocationStore; signer: Signer; clock: Clock },
  record: InvocationRecord,
  status: 'uncertain' | 'failed',
  code: FailureCode,
  reason: string,
  when = 'at restart',
): Promise<void> {
  const at = isoTime(o.clock.now());
  const entries: TraceEntry[] = [
    {
      stage: status === 'uncertain' ? 'execute' : 'sandbox',
      decision: status === 'uncertain' ? 'uncertain' : 'fail',
      reason,
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
  record.error = { code, message: reason, stage: entries[0]!.stage };
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
