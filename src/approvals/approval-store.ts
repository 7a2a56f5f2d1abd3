import type { LedgerEntries } from '../core/index.js';
import type { Approval, ApprovalStatus } from './approval.js';

/**
 * Persistence of approvals. They are created with the invocation step that suspends the call
 * (see the invocation store) and consumed with the step that resumes it.
 */
export interface ApprovalStore {
  /** The approval, if it exists in the tenant. */
  get(tenant: string, id: string): Promise<Approval | undefined>;
  /**
   * A tenant's approvals, newest first (at most 500), optionally in one status and requested by
   * one principal.
   */
  list(tenant: string, status?: ApprovalStatus, requestedBy?: string): Promise<Approval[]>;
  /** Approvals of one tool version in the given statuses. */
  listByTool(
    tenant: string,
    tool: { id: string; version: string },
    statuses: ApprovalStatus[],
  ): Promise<Approval[]>;
  /**
   * Replaces an approval whose stored version is `approval.version - 1` (compare-and-set), with
   * its audit records and events, atomically.
   * @returns false when it had changed meanwhile (nothing written).
   */
  update(approval: Approval, ledger: LedgerEntries): Promise<boolean>;
}
