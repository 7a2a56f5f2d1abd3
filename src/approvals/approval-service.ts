import { ErrorCode, EventType, GatehouseError, isoTime } from '../core/index.js';
import type { Clock, LedgerEntries } from '../core/index.js';
import type { Principal } from '../tenancy/index.js';
import { isExpired, transitionApproval } from './approval.js';
import type { Approval, ApprovalDecision, ApprovalStatus } from './approval.js';
import type { ApprovalStore } from './approval-store.js';

/** Collaborators of the {@link ApprovalService}. */
export interface ApprovalServiceOptions {
  store: ApprovalStore;
  clock: Clock;
}

/**
 * Reviewers' side of gated calls: listing, approving and rejecting approval requests of their
 * tenant, with quorum, never by the requester and never by an agent; expiry and invalidation.
 */
export class ApprovalService {
  constructor(private readonly options: ApprovalServiceOptions) {}

  /**
   * The approval, with its expiry applied (an expired one is recorded as such when first seen).
   * `owner`, when not null, is the only principal whose approvals (of its own calls) are reached:
   * another's is answered exactly as one that does not exist.
   * @throws GatehouseError NOT_FOUND when it does not exist in the tenant (or beyond `owner`).
   */
  async get(tenant: string, id: string, owner: string | null = null): Promise<Approval> {
    const a = await this.options.store.get(tenant, id);
    if (!a || (owner !== null && a.requestedBy !== owner))
      throw new GatehouseError(
        ErrorCode.NOT_FOUND,
        `Approval ${JSON.stringify(id)} does not exist.`,
      );
    return this.applyExpiry(a);
  }

  /**
   * A tenant's approvals (or, with `owner`, those of that principal's calls), newest first;
   * `pending` lists those still awaiting a decision.
   */
  async list(
    tenant: string,
    status?: ApprovalStatus,
    owner: string | null = null,
  ): Promise<Approval[]> {
    const all = await this.options.store.list(tenant, status, owner ?? undefined);
    const current = await Promise.all(all.map((a) => this.applyExpiry(a)));
    return status ? current.filter((a) => a.status === status) : current;
  }

  /**
   * Records a reviewer's decision. One rejection rejects; approvals count up to the quorum. Who
   * may decide at all (reviewers, never agents) is the REST edge's access table; here the
   * requester of the call is refused, whatever its roles. `expectedRequestHash`, when given, is
   * the request hash the reviewer saw: a decision never applies to another request.
   * @throws GatehouseError FORBIDDEN (the requester), NOT_FOUND, CONFLICT (bound to another
   *   request hash than expected, already decided, expired, or this reviewer already decided).
   */
  async decide(
    principal: Principal,
    id: string,
    decision: 'approve' | 'reject',
    reason: string,
    expectedRequestHash?: string,
  ): Promise<Approval> {
    const a = await this.get(principal.tenant, id);
    if (expectedRequestHash !== undefined && a.requestHash !== expectedRequestHash) {
      throw new GatehouseError(
        ErrorCode.CONFLICT,
        `Approval ${id} is bound to request hash ${a.requestHash}, not ${expectedRequestHash}: reload it and decide on what it binds.`,
        { details: { pointer: '/requestHash', requestHash: a.requestHash } },
      );
    }
    if (a.requestedBy === principal.id) {
      throw new GatehouseError(
        ErrorCode.FORBIDDEN,
        `You requested invocation ${a.invocationId}; its approval must come from someone else.`,
      );
    }
    if (a.status !== 'pending') {
      throw new GatehouseError(
        ErrorCode.CONFLICT,
        `Approval ${id} is already ${a.status}${a.statusReason ? ` (${a.statusReason})` : ''}; it cannot be decided again.`,
        { details: { status: a.status } },
      );
    }
    if (a.decisions.some((d) => d.principal === principal.id)) {
      throw new GatehouseError(
        ErrorCode.CONFLICT,
        `You already decided approval ${id}; each reviewer decides once.`,
      );
    }
    const at = isoTime(this.options.clock.now());
    const entry: ApprovalDecision = { principal: principal.id, decision, reason, at };
    const decisions = [...a.decisions, entry];
    const approvals = decisions.filter((d) => d.decision === 'approve').length;
    const next: ApprovalStatus =
      decision === 'reject' ? 'rejected' : approvals >= a.quorum ? 'approved' : 'pending';
    const updated: Approval = {
      ...a,
      decisions,
      status: next === 'pending' ? 'pending' : transitionApproval(a.status, next),
      version: a.version + 1,
      decidedAt: next === 'pending' ? null : at,
    };
    const data = {
      approvalId: id,
      invocationId: a.invocationId,
      requestHash: a.requestHash,
      tool: a.tool,
      decision,
      reason,
      reviewer: principal.id,
      status: updated.status,
      approvals,
      quorum: a.quorum,
    };
    await this.save(updated, {
      audit: [
        {
          tenant: a.tenant,
          type: `approval.${decision === 'approve' ? 'approved' : 'rejected'}`,
          subject: `approval/${id}`,
          at,
          actor: principal.id,
          data,
        },
      ],
      events: [
        {
          type: EventType.ApprovalDecided,
          tenant: a.tenant,
          subject: `approval/${id}`,
          at,
          data,
          owner: a.requestedBy,
        },
      ],
    });
    return updated;
  }

  /**
   * Invalidates every pending or approved approval of a tool version (its release was revoked).
   * @returns the approvals it invalidated.
   */
  async invalidateForTool(
    tenant: string,
    tool: { id: string; version: string },
    reason: string,
    actor: string,
  ): Promise<Approval[]> {
    const open = await this.options.store.listByTool(tenant, tool, ['pending', 'approved']);
    const done: Approval[] = [];
    for (const a of open) {
      const at = isoTime(this.options.clock.now());
      const updated: Approval = {
        ...a,
        status: transitionApproval(a.status, 'invalidated'),
        version: a.version + 1,
        statusReason: reason,
      };
      const data = {
        approvalId: a.id,
        invocationId: a.invocationId,
        status: 'invalidated',
        reason,
      };
      const ok = await this.options.store.update(updated, {
        audit: [
          { tenant, type: 'approval.invalidated', subject: `approval/${a.id}`, at, actor, data },
        ],
        events: [
          {
            type: EventType.ApprovalDecided,
            tenant,
            subject: `approval/${a.id}`,
            at,
            data,
            owner: a.requestedBy,
          },
        ],
      });
      if (ok) done.push(updated);
    }
    return done;
  }

  private async applyExpiry(a: Approval): Promise<Approval> {
    if (
      (a.status !== 'pending' && a.status !== 'approved') ||
      !isExpired(a, this.options.clock.now())
    )
      return a;
    const at = isoTime(this.options.clock.now());
    const updated: Approval = {
      ...a,
      status: transitionApproval(a.status, 'expired'),
      version: a.version + 1,
      statusReason: `expired at ${a.expiresAt}`,
    };
    const data = {
      approvalId: a.id,
      invocationId: a.invocationId,
      status: 'expired',
      expiresAt: a.expiresAt,
    };
    const ok = await this.options.store.update(updated, {
      audit: [
        {
          tenant: a.tenant,
          type: 'approval.expired',
          subject: `approval/${a.id}`,
          at,
          actor: 'system',
          data,
        },
      ],
      events: [
        {
          type: EventType.ApprovalDecided,
          tenant: a.tenant,
          subject: `approval/${a.id}`,
          at,
          data,
          owner: a.requestedBy,
        },
      ],
    });
    return ok ? updated : ((await this.options.store.get(a.tenant, a.id)) ?? updated);
  }

  private async save(updated: Approval, ledger: LedgerEntries): Promise<void> {
    if (!(await this.options.store.update(updated, ledger))) {
      throw new GatehouseError(
        ErrorCode.CONFLICT,
        `Approval ${updated.id} changed while you decided it; read it again.`,
      );
    }
  }
}
