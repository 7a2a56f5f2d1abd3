import { ErrorCode, EventType, FailureCode, GatehouseError, isoTime } from '../core/index.js';
import type { Clock } from '../core/index.js';
import type { Signer } from '../audit/index.js';
import type { Principal } from '../tenancy/index.js';
import type { InvocationRecord } from './invocation-record.js';
import type { InvocationStore } from './invocation-store.js';
import { transitionInvocation } from './invocation-status.js';
import { invocationStep } from './invocation-step.js';
import type { TraceEntry } from './stage.js';

/**
 * Operators' side of Uncertain effects (DESIGN §3): list them, and resolve each with evidence.
 * Confirmed: the call is recorded as having had its effect (`observed`), and a retry returns it.
 * Denied: it is recorded `failed`, and a retry with the same key runs as a new attempt.
 */
export class UncertainEffects {
  constructor(private readonly options: { store: InvocationStore; signer: Signer; clock: Clock }) {}

  /** The tenant's unresolved Uncertain invocations, newest first. */
  list(tenant: string): Promise<InvocationRecord[]> {
    return this.options.store.list(tenant, { status: 'uncertain', limit: 500 });
  }

  /**
   * Resolves an Uncertain invocation, with a new receipt. Who may (operators) is the REST edge's
   * access table.
   * @throws GatehouseError NOT_FOUND, CONFLICT (not uncertain), INVALID_INPUT (no evidence).
   */
  async resolve(
    principal: Principal,
    id: string,
    effect: 'confirmed' | 'denied',
    evidence: unknown,
  ): Promise<InvocationRecord> {
    if (evidence === undefined || evidence === null || evidence === '') {
      throw new GatehouseError(
        ErrorCode.INVALID_INPUT,
        '/evidence is required: say what shows the effect did or did not happen (a link, a log line, a ticket).',
        { details: { pointer: '/evidence' } },
      );
    }
    const record = await this.options.store.get(principal.tenant, id);
    if (!record)
      throw new GatehouseError(
        ErrorCode.NOT_FOUND,
        `Invocation ${JSON.stringify(id)} does not exist.`,
      );
    if (record.status !== 'uncertain') {
      throw new GatehouseError(
        ErrorCode.CONFLICT,
        `Invocation ${id} is ${record.status}, not uncertain; only Uncertain effects are resolved.`,
        { details: { status: record.status } },
      );
    }
    const at = isoTime(this.options.clock.now());
    const status = transitionInvocation(
      'uncertain',
      effect === 'confirmed' ? 'observed' : 'failed',
    );
    const entry: TraceEntry = {
      stage: 'resolution',
      decision: effect,
      reason:
        effect === 'confirmed'
          ? `operator ${principal.id} confirmed the effect happened`
          : `operator ${principal.id} denied the effect: it did not happen; a retry runs as a new attempt`,
      at,
      details: { evidence },
    };
    const resolved: InvocationRecord = {
      ...record,
      status,
      resolution: { effect, evidence, by: principal.id, at },
      trace: [...record.trace, entry],
      updatedAt: at,
      completedAt: at,
      ...(effect === 'denied'
        ? {
            error: {
              code: FailureCode.EFFECT_DENIED,
              message: `the effect did not happen (operator ${principal.id})`,
              stage: 'resolution',
            },
          }
        : {}),
    };
    const data = {
      invocationId: id,
      tool: record.tool,
      requestHash: record.requestHash,
      effect,
      evidence,
      status,
      operator: principal.id,
    };
    await this.options.store.save(
      invocationStep({
        record: resolved,
        at,
        actor: principal.id,
        audit: { type: 'invocation.resolved', data },
        events: [{ type: EventType.ToolEffectResolved, data }],
        signer: this.options.signer,
      }),
    );
    return resolved;
  }
}
