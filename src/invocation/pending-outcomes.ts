import { FailureCode } from '../core/index.js';
import type { Clock } from '../core/index.js';
import type { Signer } from '../audit/index.js';
import type { InvocationStore } from './invocation-store.js';
import { settle } from './recover-interrupted.js';

/** Collaborators of {@link PendingOutcomes}. */
export interface PendingOutcomesOptions {
  store: InvocationStore;
  signer: Signer;
  clock: Clock;
  /** How often to retry while some are pending (default 1 s). */
  intervalMs?: number;
}

/**
 * Calls whose pass ended without its outcome recorded (storage refused the write): what storage
 * last holds of them is `running` (the effect may have happened) or `queued` (nothing ran). Until
 * storage takes writes again, each is retried in the background: a `running` one becomes
 * `uncertain`, a `queued` one `failed` and retryable, as a restart would settle them — without
 * one. Anything else storage holds (no record, a decided outcome) needs nothing.
 */
export class PendingOutcomes {
  private readonly pending = new Map<string, { tenant: string; id: string }>();
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<number> | undefined;

  constructor(private readonly options: PendingOutcomesOptions) {}

  /** Remembers a call whose pass ended unrecorded; retried from the next interval on. */
  add(tenant: string, id: string): void {
    this.pending.set(`${tenant}\u0000${id}`, { tenant, id });
    if (this.timer) return;
    this.timer = setInterval(() => void this.retry().catch(() => undefined), this.interval());
    this.timer.unref();
  }

  /** How many wait to be settled. */
  get size(): number {
    return this.pending.size;
  }

  /**
   * One round: settles each pending call that storage still holds unsettled. Concurrent calls
   * share the round in progress. @returns how many it settled.
   */
  retry(): Promise<number> {
    this.running ??= this.round().finally(() => (this.running = undefined));
    return this.running;
  }

  private async round(): Promise<number> {
    let settled = 0;
    for (const [key, { tenant, id }] of this.pending) {
      try {
        const record = await this.options.store.get(tenant, id);
        if (record?.status === 'running') {
          await settle(
            this.options,
            record,
            {
              code: FailureCode.OUTCOME_NOT_RECORDED,
              message: 'Storage refused the write of this call’s outcome',
              effectMayHaveStarted: true,
              uncertainNote: 'its effect may have happened and was not confirmed',
            },
            'once storage accepted writes again',
          );
          settled += 1;
        } else if (record?.status === 'queued') {
          await settle(
            this.options,
            record,
            {
              code: FailureCode.QUEUE_INTERRUPTED,
              message:
                'Storage refused a write while this call waited for capacity; nothing ran — retry it with the same key',
              effectMayHaveStarted: false,
            },
            'once storage accepted writes again',
          );
          settled += 1;
        }
        this.pending.delete(key);
      } catch {
        // Storage still refuses: keep it for the next round, and the rest too.
        break;
      }
    }
    if (this.pending.size === 0) this.close();
    return settled;
  }

  private interval(): number {
    return this.options.intervalMs ?? 1000;
  }

  /** Stops retrying (what is pending stays for a restart to settle). Safe to call twice. */
  close(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
  }
}
