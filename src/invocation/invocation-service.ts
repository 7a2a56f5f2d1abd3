import {
  AbortReason,
  ErrorCode,
  GatehouseError,
  isRetryableFailure,
  ResourceLifecycle,
  isoTime,
  requestHash,
} from '../core/index.js';
import type { Clock, IdGenerator } from '../core/index.js';
import { checkApproval } from '../approvals/index.js';
import type { Approval, ApprovalService } from '../approvals/index.js';
import { patternRedactor } from '../secrets/index.js';
import type { Directory, Principal } from '../tenancy/index.js';
import type { ToolRegistry } from '../tools/index.js';
import type { InvocationRecord } from './invocation-record.js';
import { lostToAnotherWriter } from './key-taken.js';
import type { InvocationQuery, InvocationStore } from './invocation-store.js';
import type { PipelineContext } from './pipeline-context.js';
import type { Pipeline } from './pipeline.js';
import type { InvocationTelemetry } from './invocation-telemetry.js';

/** What an agent asks for (DESIGN §9, `POST /v1/invocations`). */
export interface InvokeRequest {
  tool: { id: string; version: string };
  input: unknown;
  environment: string;
  idempotencyKey: string;
  runId?: string;
  attemptId?: string;
  approvalId?: string;
  /** The caller's span and log; not part of the request (nor of its hash). */
  telemetry?: InvocationTelemetry;
}

/** Collaborators of the {@link InvocationService}. */
export interface InvocationServiceOptions {
  pipeline: Pipeline;
  store: InvocationStore;
  registry: ToolRegistry;
  directory: Directory;
  approvals: ApprovalService;
  clock: Clock;
  ids: IdGenerator;
}

/** A call in flight, so revocation and shutdown can abort it. */
interface Running {
  tenant: string;
  tool: string;
  controller: AbortController;
}

/**
 * The entry point for invocations: idempotency (the same key and request hash is the same
 * invocation, never executed twice, even when duplicates arrive together), resumption with an
 * approval, retries after an operator denied an Uncertain effect, and the pipeline.
 */
export class InvocationService {
  private readonly inFlight = new Map<string, { hash: string; done: Promise<InvocationRecord> }>();
  private readonly running = new Map<string, Running>();
  /** `open`; `closed` once shutdown aborted every running call (later calls are aborted too). */
  private readonly state = new ResourceLifecycle('the invocation service');

  constructor(private readonly options: InvocationServiceOptions) {}

  /**
   * Runs, resumes or replays an invocation. Who may invoke is the REST edge's access table; here
   * the principal must be one that can (an agent release and a project).
   * @throws GatehouseError FORBIDDEN (no agent release or project), IDEMPOTENCY_KEY_REUSED (same
   *   key, another request), EFFECT_UNCERTAIN (a retry of an unresolved Uncertain request),
   *   NOT_FOUND (an approval that is not of this principal's calls) / APPROVAL_STALE /
   *   APPROVAL_PENDING / APPROVAL_CONSUMED (an approval that cannot be used).
   */
  async invoke(principal: Principal, req: InvokeRequest): Promise<InvocationRecord> {
    if (!principal.agent || !principal.project) {
      throw new GatehouseError(
        ErrorCode.FORBIDDEN,
        'Only agent principals (with a project and an agent release) may invoke tools.',
      );
    }
    const project = principal.project;
    const agent = principal.agent;
    const hash = requestHash({
      tenant: principal.tenant,
      project,
      environment: req.environment,
      agent,
      tool: req.tool,
      input: req.input,
    });
    const key = `${principal.tenant}\u0000${principal.id}\u0000${req.idempotencyKey}`;
    const running = this.inFlight.get(key);
    if (running) {
      if (running.hash !== hash) throw reused(req.idempotencyKey, hash, running.hash);
      return running.done;
    }
    const done = this.dispatch(principal, req, hash).catch((err: unknown) => {
      // Another node sharing the database recorded this key's call (or resumed it) first:
      // answer as a retry of the request is answered, from what that node stored.
      if (!lostToAnotherWriter(err)) throw err;
      return this.dispatch(principal, req, hash);
    });
    this.inFlight.set(key, { hash, done });
    try {
      return await done;
    } finally {
      this.inFlight.delete(key);
    }
  }

  private async dispatch(
    principal: Principal,
    req: InvokeRequest,
    hash: string,
  ): Promise<InvocationRecord> {
    // Only an approval of this principal's own calls: another agent's is answered as missing
    // (its id is the caller's to name, its existence and request hash are not theirs to learn).
    const approval =
      req.approvalId === undefined
        ? undefined
        : await this.options.approvals.get(principal.tenant, req.approvalId, principal.id);
    const existing = await this.options.store.findByKey(
      principal.tenant,
      principal.id,
      req.idempotencyKey,
    );
    // Checked once: when the call resumes, `existing` has this request hash and tool version (or
    // the key is refused below), so this is the check resume() decides by. The approval is
    // checked again where it is consumed, in the transaction that records the resumed call.
    const problem = approval
      ? checkApproval(
          approval,
          {
            tenant: principal.tenant,
            invocationId: existing?.id ?? '(a new invocation)',
            requestHash: hash,
            tool: req.tool,
            descriptorDigest: existing?.tool.descriptorDigest ?? null,
          },
          this.options.clock.now(),
        )
      : null;
    if (approval) {
      if (problem?.code === 'APPROVAL_CONSUMED' && existing?.id !== approval.invocationId) {
        throw new GatehouseError(ErrorCode.APPROVAL_CONSUMED, problem.message, {
          details: { approvalId: approval.id },
        });
      }
      if (problem?.code === 'APPROVAL_STALE')
        throw new GatehouseError(ErrorCode.APPROVAL_STALE, problem.message, {
          details: {
            approvalId: approval.id,
            approvedRequestHash: approval.requestHash,
            requestHash: hash,
          },
        });
    }
    if (!existing) return this.start(principal, req, hash, 1, null);
    if (existing.requestHash !== hash) throw reused(req.idempotencyKey, hash, existing.requestHash);
    switch (existing.status) {
      case 'awaiting_approval':
        return approval
          ? this.resume(principal, existing, approval, problem, req.telemetry)
          : existing;
      case 'uncertain':
        throw new GatehouseError(
          ErrorCode.EFFECT_UNCERTAIN,
          `Invocation ${existing.id} for this request ended uncertain: its effect may have happened. An operator must confirm or deny the effect (POST /v1/invocations/${existing.id}/resolve) before it can be retried.`,
          { details: { invocation: existing.id } },
        );
      case 'failed':
        if (existing.resolution?.effect === 'denied' || isRetryableFailure(existing.error?.code))
          return this.start(principal, req, hash, existing.attempt + 1, existing.id);
        return existing;
      case 'denied':
      case 'queued':
      case 'running':
      case 'observed':
        return existing;
    }
  }

  private start(
    principal: Principal,
    req: InvokeRequest,
    hash: string,
    attempt: number,
    previousAttempt: string | null,
  ): Promise<InvocationRecord> {
    const now = isoTime(this.options.clock.now());
    const tool = this.options.registry.tool(principal.tenant, req.tool.id, req.tool.version);
    const record: InvocationRecord = {
      id: this.options.ids.next(),
      status: 'running',
      tenant: principal.tenant,
      project: principal.project!,
      environment: req.environment,
      principal: principal.id,
      agent: principal.agent!,
      tool: {
        id: req.tool.id,
        version: req.tool.version,
        descriptorDigest: tool?.stored.digest ?? null,
      },
      input: req.input,
      requestHash: hash,
      idempotencyKey: req.idempotencyKey,
      attempt,
      previousAttempt,
      effectiveClass: null,
      runId: req.runId ?? null,
      attemptId: req.attemptId ?? null,
      approvalId: null,
      approval: null,
      resolution: null,
      trace: [],
      lease: null,
      egress: [],
      redactions: [],
      warnings: [],
      createdAt: now,
      updatedAt: now,
      completedAt: null,
      audit: null,
    };
    return this.track(this.context(principal, record, req.telemetry), (ctx) =>
      this.options.pipeline.run(ctx),
    );
  }

  /**
   * Resumes a call awaiting approval with the approval it presented, `problem` being what
   * `checkApproval` found with it for this invocation.
   */
  private async resume(
    principal: Principal,
    existing: InvocationRecord,
    approval: Approval,
    problem: ReturnType<typeof checkApproval>,
    telemetry: InvocationTelemetry | undefined,
  ): Promise<InvocationRecord> {
    const ctx = this.context(principal, existing, telemetry);
    if (problem?.kind === 'refuse') {
      throw new GatehouseError(problem.code, problem.message, {
        details: { approvalId: approval.id, status: approval.status },
      });
    }
    if (problem) return this.options.pipeline.deny(ctx, problem.code, problem.message);
    const stored = ctx.tool?.stored;
    if (!stored || stored.state === 'revoked') {
      return this.options.pipeline.deny(
        ctx,
        'TOOL_REVOKED',
        `${existing.tool.id}@${existing.tool.version} was revoked while the call waited for approval${stored?.stateReason ? ` (${stored.stateReason})` : ''}.`,
      );
    }
    ctx.approved = approval;
    return this.track(ctx, (c) => this.options.pipeline.run(c, 'approval'));
  }

  private context(
    principal: Principal,
    record: InvocationRecord,
    telemetry?: InvocationTelemetry,
  ): PipelineContext {
    const tool = this.options.registry.tool(record.tenant, record.tool.id, record.tool.version);
    const release = this.options.registry.agentRelease(
      record.tenant,
      record.agent.id,
      record.agent.version,
    );
    const environment = this.options.directory.environment(
      record.tenant,
      record.project,
      record.environment,
    );
    return {
      record,
      principal,
      controller: new AbortController(),
      redactor: patternRedactor(),
      markQueued: () => Promise.resolve(),
      cleanup: [],
      pendingAudit: [],
      captures: [],
      executorRemovals: [],
      egress: [],
      savedTrace: record.trace.length,
      ...(telemetry ? { telemetry } : {}),
      ...(tool ? { tool } : {}),
      ...(release ? { release } : {}),
      ...(environment ? { environment } : {}),
    };
  }

  /** Runs a pass of the pipeline with an abort controller that revocation and shutdown reach. */
  private async track(
    ctx: PipelineContext,
    pass: (ctx: PipelineContext) => Promise<InvocationRecord>,
  ): Promise<InvocationRecord> {
    const controller = ctx.controller;
    const id = ctx.record.id;
    this.running.set(id, {
      tenant: ctx.record.tenant,
      tool: `${ctx.record.tool.id}@${ctx.record.tool.version}`,
      controller,
    });
    if (this.state.isClosing) controller.abort(shutdownReason());
    try {
      return await pass(ctx);
    } finally {
      this.running.delete(id);
    }
  }

  /**
   * Applies a revoked release's in-flight policy: `abort` cancels the running calls of that tool
   * version through their AbortSignal (each then ends uncertain or failed, as its executor knows).
   * @returns how many calls were aborted.
   */
  abortRunning(tenant: string, tool: { id: string; version: string }, reason: string): number {
    const ref = `${tool.id}@${tool.version}`;
    let n = 0;
    for (const r of this.running.values()) {
      if (r.tenant === tenant && r.tool === ref) {
        r.controller.abort(new AbortReason('REVOKED', `${ref} was revoked: ${reason}`));
        n += 1;
      }
    }
    return n;
  }

  /**
   * Ends as `denied` every call awaiting an approval that can no longer let it run — expired
   * undecided, rejected or invalidated (DESIGN §3) — without waiting for its agent to come back,
   * exactly as that agent's resumption would. A call whose request is in flight is left to it.
   * Safe to repeat. @returns the calls it denied.
   */
  async denyUnusableApprovals(): Promise<InvocationRecord[]> {
    const denied: InvocationRecord[] = [];
    for (const record of await this.options.store.listByStatus('awaiting_approval')) {
      if (record.approvalId === null) continue;
      const key = `${record.tenant}\u0000${record.principal}\u0000${record.idempotencyKey}`;
      if (this.inFlight.has(key)) continue;
      const approval = await this.options.approvals
        .get(record.tenant, record.approvalId)
        .catch(() => undefined);
      if (!approval) continue;
      const problem = checkApproval(
        approval,
        {
          tenant: record.tenant,
          invocationId: record.id,
          requestHash: record.requestHash,
          tool: record.tool,
          descriptorDigest: record.tool.descriptorDigest,
        },
        this.options.clock.now(),
      );
      if (problem?.kind !== 'deny') continue;
      const owner: Principal = {
        id: record.principal,
        tenant: record.tenant,
        name: record.principal,
        roles: ['agent'],
        project: record.project,
        agent: record.agent,
      };
      const done = this.options.pipeline.deny(
        this.context(owner, record),
        problem.code,
        problem.message,
      );
      this.inFlight.set(key, { hash: record.requestHash, done });
      try {
        denied.push(await done);
      } finally {
        this.inFlight.delete(key);
      }
    }
    return denied;
  }

  /**
   * The invocation, in the tenant; `owner`, when not null, is the only principal whose
   * invocations are reached: another's is answered exactly as one that does not exist.
   * @throws GatehouseError NOT_FOUND.
   */
  async get(tenant: string, id: string, owner: string | null): Promise<InvocationRecord> {
    const record = await this.options.store.get(tenant, id);
    if (!record || (owner !== null && record.principal !== owner)) {
      throw new GatehouseError(
        ErrorCode.NOT_FOUND,
        `Invocation ${JSON.stringify(id)} does not exist.`,
      );
    }
    return record;
  }

  /** A tenant's invocations (or only `owner`'s, when not null), newest first. */
  list(tenant: string, owner: string | null, query: InvocationQuery): Promise<InvocationRecord[]> {
    return this.options.store.list(tenant, owner === null ? query : { ...query, principal: owner });
  }

  /**
   * The receipt (a DSSE envelope) of an invocation whose outcome is decided.
   * @throws GatehouseError NOT_FOUND (as {@link get}), or CONFLICT while the outcome is not decided.
   */
  async receipt(tenant: string, id: string, owner: string | null): Promise<unknown> {
    const record = await this.get(tenant, id, owner);
    const receipt = await this.options.store.receipt(tenant, record.id);
    if (receipt === undefined) {
      throw new GatehouseError(
        ErrorCode.CONFLICT,
        `Invocation ${id} is ${record.status}; its receipt is signed when its outcome is decided.`,
        { details: { status: record.status } },
      );
    }
    return receipt;
  }

  /** Aborts every running call (their executors see the signal). Safe to call twice. */
  abortAll(): void {
    // Nothing in the shutdown awaits: every running call is aborted before this returns.
    void this.state.close(() => {
      for (const r of this.running.values()) r.controller.abort(shutdownReason());
    });
  }
}

function shutdownReason(): AbortReason {
  return new AbortReason('SHUTDOWN', 'Gatehouse is shutting down');
}

function reused(key: string, hash: string, previous: string): GatehouseError {
  return new GatehouseError(
    ErrorCode.IDEMPOTENCY_KEY_REUSED,
    `Idempotency-Key ${JSON.stringify(key)} was already used for another request (request hash ${previous}, this one ${hash}); use a new key for a new request.`,
    { details: { requestHash: hash, previousRequestHash: previous } },
  );
}
