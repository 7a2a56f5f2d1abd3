import { EventType, isoTime } from '../core/index.js';
import type { Clock } from '../core/index.js';
import { signReceipt } from '../audit/index.js';
import type { Signer } from '../audit/index.js';
import type { InvocationRecord } from './invocation-record.js';
import { transitionInvocation } from './invocation-status.js';
import type { InvocationStore } from './invocation-store.js';
import { receiptPredicate } from './receipt-predicate.js';
import type { TraceEntry } from './stage.js';

/**
 * At start: every invocation left `running` by a stopped or crashed Gatehouse may have had its
 * effect, so it becomes `uncertain` (with a `ToolEffectUncertain` event and a receipt). Safe to
 * repeat: a second pass finds nothing running.
 * @returns the invocations it marked.
 */
export async function recoverInterrupted(o: {
  store: InvocationStore;
  signer: Signer;
  clock: Clock;
}): Promise<InvocationRecord[]> {
  const interrupted = await o.store.listByStatus('running');
  for (const record of interrupted) {
    const at = isoTime(o.clock.now());
    const reason =
      'Gatehouse stopped while this call was running; its effect may have happened and was not confirmed';
    const entries: TraceEntry[] = [
      { stage: 'execute', decision: 'uncertain', reason, at },
      {
        stage: 'audit',
        decision: 'recorded',
        reason: 'audit record appended and receipt signed at restart',
        at,
      },
    ];
    record.status = transitionInvocation('running', 'uncertain');
    record.trace.push(...entries);
    record.error = { code: 'GATEWAY_RESTARTED', message: reason, stage: 'execute' };
    record.updatedAt = at;
    record.completedAt = at;
    const subject = `invocation/${record.id}`;
    const summary = {
      invocationId: record.id,
      tool: record.tool,
      agent: record.agent,
      status: 'uncertain',
      requestHash: record.requestHash,
    };
    await o.store.save({
      record,
      ledger: {
        audit: [
          {
            tenant: record.tenant,
            type: 'invocation.uncertain',
            subject,
            at,
            actor: 'system',
            data: { ...summary, stages: entries, error: record.error },
          },
        ],
        events: [
          {
            type: EventType.ToolEffectUncertain,
            tenant: record.tenant,
            subject,
            at,
            data: { ...summary, error: record.error },
          },
        ],
      },
      seal: (last) => signReceipt(receiptPredicate({ ...record, audit: last }), o.signer),
    });
  }
  return interrupted;
}
