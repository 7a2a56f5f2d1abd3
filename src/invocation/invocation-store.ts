import type { AuditPosition, LedgerEntries } from '../core/index.js';
import type { Approval } from '../approvals/index.js';
import type { InvocationRecord } from './invocation-record.js';
import type { InvocationStatus } from './invocation-status.js';

/** One durable step of an invocation: its record, audit records and events, in one transaction. */
export interface InvocationStep {
  record: InvocationRecord;
  ledger: LedgerEntries;
  /** An approval request to create with this step (the call is suspended). */
  approval?: Approval;
  /**
   * The id of an approved approval to consume with this step; if it is not `approved` any more
   * the step fails with APPROVAL_CONSUMED and nothing is written.
   */
  consumeApproval?: string;
  /**
   * Called inside the transaction once the audit records have their positions, with the position
   * of the last one; returns the receipt to store (a terminal step) or undefined.
   */
  seal?: (last: AuditPosition) => unknown;
  /**
   * The status the stored record must still have for the step to be written (the settling of an
   * interrupted call, which two nodes may attempt at once); if it has another, the step fails
   * with CONFLICT and nothing is written.
   */
  expectedStatus?: InvocationStatus;
}

/**
 * A query over a tenant's invocations, newest first (by id: ids are UUIDv7, so in creation order).
 * Every filter given must hold; `before` pages on from the last id of an earlier answer.
 */
export interface InvocationQuery {
  status?: InvocationStatus;
  /** The principal that made the call (an agent's reads are narrowed to its own by this). */
  principal?: string;
  /** The tool id, and its version when given. */
  tool?: { id: string; version?: string };
  /** The agent id (of the agent release the calling principal acts as). */
  agent?: string;
  environment?: string;
  /** Created at or after this instant (ISO 8601 in UTC, as `Date.toISOString` writes it). */
  from?: string;
  /** Created before this instant (same form as `from`). */
  to?: string;
  /** Only invocations older than this one (an id): the next page after it. */
  before?: string;
  limit: number;
}

/** Persistence of invocations and their receipts. */
export interface InvocationStore {
  /** The latest attempt of the invocation a principal made with an idempotency key, if any. */
  findByKey(tenant: string, principal: string, key: string): Promise<InvocationRecord | undefined>;
  /** The invocation, if it exists in the tenant. */
  get(tenant: string, id: string): Promise<InvocationRecord | undefined>;
  /** A tenant's invocations, newest first. */
  list(tenant: string, query: InvocationQuery): Promise<InvocationRecord[]>;
  /**
   * Invocations of every tenant in one state (for recovery), oldest first; with `nodes`, only
   * those last stored by these nodes (`null` in it: also those stored without a node).
   */
  listByStatus(
    status: InvocationStatus,
    nodes?: readonly (string | null)[],
  ): Promise<InvocationRecord[]>;
  /** The stored receipt of an invocation, if it has one. */
  receipt(tenant: string, id: string): Promise<unknown>;
  /**
   * Writes one step atomically and durably: audit records appended to the tenant's log, events to
   * the outbox, `seal` called, the record (with `audit` set to the last position) and the receipt
   * stored. Resolves with the last audit position.
   * @throws when the write fails; then nothing of the step is stored.
   */
  save(step: InvocationStep): Promise<AuditPosition>;
}
