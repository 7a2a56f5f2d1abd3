import { ErrorCode, EventType, FailureCode, isGatehouseError, isoTime } from '../core/index.js';
import type { Clock } from '../core/index.js';
import type { Signer } from '../audit/index.js';
import type { InvocationRecord } from './invocation-record.js';
import type { InvocationStore } from './invocation-store.js';
import { invocationSummary } from './invocation-ledger.js';
import { enterStatus, invocationStep } from './invocation-step.js';
import { judgeExecution } from './execution-verdict.js';

/** Whose interrupted calls {@link recoverInterrupted} settles, and why they were interrupted. */
export interface RecoveryScope {
  /**
   * Only the calls last stored by these nodes (`null` in it: also those stored without a node);
   * every interrupted call when absent (one gateway alone on its database).
   */
  nodes?: readonly (string | null)[];
  /**
   * Set when another node takes over a node that stopped heartbeating (DESIGN §12): the calls
   * were interrupted by the loss of node `node`, settled by node `by`. Absent: by a restart.
   */
  lost?: { node: string; by: string };
}

/**
 * At start (or when a surviving node takes over a dead one): every invocation left `running` by a
 * stopped, crashed or lost Gatehouse may have had its effect, so a write-class one becomes
 * `uncertain` (with a `ToolEffectUncertain` event and a receipt) and a read-class one `failed`;
 * every one left `queued` never started, so it becomes `failed`, retryable. {@link judgeExecution}
 * decides which. A call another node settled meanwhile is left as it is. Safe to repeat.
 * @returns the invocations it marked.
 */
export async function recoverInterrupted(
  o: {
    store: InvocationStore;
    signer: Signer;
    clock: Clock;
  } & RecoveryScope,
): Promise<InvocationRecord[]> {
  const running = await o.store.listByStatus('running', o.nodes);
  const queued = await o.store.listByStatus('queued', o.nodes);
  const lost = o.lost;
  const who = lost ? `The gateway node ${lost.node} stopped heartbeating` : 'Gatehouse stopped';
  const when = lost ? `by node ${lost.by}, which took over node ${lost.node}` : 'at restart';
  const settled: InvocationRecord[] = [];
  for (const record of running) {
    const done = await settleOnce(
      o,
      record,
      {
        code: lost ? FailureCode.NODE_LOST : FailureCode.GATEWAY_RESTARTED,
        message: `${who} while this call was running`,
        effectMayHaveStarted: true,
        uncertainNote: 'its effect may have happened and was not confirmed',
      },
      when,
    );
    if (done) settled.push(record);
  }
  for (const record of queued) {
    const done = await settleOnce(
      o,
      record,
      {
        code: FailureCode.QUEUE_INTERRUPTED,
        message: `${who} while this call waited for capacity; nothing ran — retry it with the same key`,
        effectMayHaveStarted: false,
      },
      when,
    );
    if (done) settled.push(record);
  }
  return settled;
}

/** Settles `record` unless another node settled it first (then false). */
async function settleOnce(
  o: { store: InvocationStore; signer: Signer; clock: Clock },
  record: InvocationRecord,
  interruption: Interruption,
  when: string,
): Promise<boolean> {
  try {
    await settle(o, record, interruption, when);
    return true;
  } catch (err) {
    if (isGatehouseError(err) && err.code === ErrorCode.CONFLICT) return false;
    throw err;
  }
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
 * record; `when` says when (default: at restart). Written only while the stored record still has
 * the status `record` was read with.
 * @throws GatehouseError CONFLICT when the stored record changed status meanwhile (another node
 *   settled it); when the store cannot record it (the record stays as it was).
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
  const step = invocationStep({
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
  });
  step.expectedStatus = from;
  await o.store.save(step);
}
