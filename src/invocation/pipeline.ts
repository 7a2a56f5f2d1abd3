import { EventType, isoTime } from '../core/index.js';
import type { Clock, DenialCode } from '../core/index.js';
import type { Tracer } from '@opentelemetry/api';
import type { ArtifactStore, Signer } from '../audit/index.js';
import { classifySideEffect } from '../policy/index.js';
import type { TenantPolicy } from '../policy/index.js';
import type { KnownVersion } from '../tools/index.js';
import type { Executor } from './executor.js';
import type { InvocationRecord } from './invocation-record.js';
import type { InvocationStatus } from './invocation-status.js';
import type { InvocationStore } from './invocation-store.js';
import { validated } from './pipeline-context.js';
import type { ClassifiedContext, PipelineContext } from './pipeline-context.js';
import { invocationSummary } from './invocation-ledger.js';
import { enterStatus, invocationStep } from './invocation-step.js';
import { isSettledMeanwhile, lostToAnotherWriter } from './key-taken.js';
import type { StepParts } from './invocation-step.js';
import type { StageName, StageResult, TraceEntry } from './stage.js';
import { validationStage } from './stages/validation-stage.js';
import { permissionStage } from './stages/permission-stage.js';
import { policyStage } from './stages/policy-stage.js';
import { classificationStage } from './stages/classification-stage.js';
import { approvalStage } from './stages/approval-stage.js';
import type { ApprovalSettings } from './stages/approval-stage.js';
import { credentialsStage } from './stages/credentials-stage.js';
import { sandboxStage } from './stages/sandbox-stage.js';
import { OutputCapture } from './output-capture.js';
import type { SandboxLeases } from './sandbox-leases.js';
import type { PendingOutcomes } from './pending-outcomes.js';
import type { CredentialBroker } from '../secrets/index.js';
import { executeStage } from './stages/execute-stage.js';
import { sanitizeStage } from './stages/sanitize-stage.js';
import { InvocationTrace, noopTracer } from './invocation-telemetry.js';
import type { InvocationLog } from './invocation-telemetry.js';

/**
 * The `tool` label of an outcome: `id@version` of a published descriptor, or {@link UNKNOWN_TOOL}
 * when the call named none (its id and version are the caller's text: one label each would let an
 * agent grow the metrics, and the public /metrics would show what it wrote).
 */
export const UNKNOWN_TOOL = '(unknown)';

function metricToolLabel(tool: InvocationRecord['tool']): string {
  return tool.descriptorDigest === null ? UNKNOWN_TOOL : `${tool.id}@${tool.version}`;
}

/** Observes the pipeline for metrics. */
export interface PipelineMetrics {
  stage(name: StageName, seconds: number): void;
  outcome(tool: string, status: InvocationStatus): void;
}

/** Collaborators of the {@link Pipeline}. */
export interface PipelineOptions {
  policy: TenantPolicy;
  executors: ReadonlyMap<string, Executor>;
  store: InvocationStore;
  signer: Signer;
  artifacts: ArtifactStore;
  clock: Clock;
  approvals: ApprovalSettings;
  /** The credential broker; without one, a descriptor that declares credentials fails closed. */
  broker?: CredentialBroker;
  /** Sandbox leases; without them, tools that need a sandbox fail before any effect. */
  leases?: SandboxLeases;
  metrics?: PipelineMetrics;
  /** Where a pass that ended without its outcome recorded goes, to be settled when it can be. */
  pending?: PendingOutcomes;
  /** Spans per invocation and stage (DESIGN §13); without one, a no-op tracer. */
  tracer?: Tracer;
  /** The log of calls whose request brought none (recovery, the MCP endpoint). */
  log?: InvocationLog;
  /** Output beyond this many bytes is cut and kept whole as an artifact (default 64 KiB). */
  maxOutputBytes: number;
  /** Most bytes each output stream of a call keeps in its artifact. */
  maxArtifactBytes?: number;
  /** Execute-stage timeout for descriptors that set none. */
  defaultTimeoutMs: number;
  /**
   * This gateway's node id (DESIGN §12): each record the pipeline stores carries it, so a call
   * left `running` by a node that dies is found and taken over by another.
   */
  node?: string;
  /** Names of the environments of a project, for the validation stage's message. */
  environmentNames: (tenant: string, project: string) => string[];
  /** The published versions of a tool id, for the validation stage's message. */
  toolVersions: (tenant: string, id: string) => KnownVersion[];
}

interface Step {
  name: StageName;
  run: (ctx: PipelineContext) => StageResult | Promise<StageResult>;
}

/**
 * The invocation pipeline (DESIGN §3): one ordered list of stages, each deciding continue, deny,
 * suspend or fail, each decision recorded on the invocation and in the audit log. A call whose
 * effective class can change anything is recorded `running` before it executes, so a crash leaves
 * it `uncertain`, never forgotten; a `read` call is recorded once, with its outcome.
 */
export class Pipeline {
  private readonly steps: Step[];
  private readonly tracer: Tracer;

  constructor(private readonly options: PipelineOptions) {
    this.tracer = options.tracer ?? noopTracer();
    this.steps = [
      {
        name: 'validation',
        run: (c) =>
          validationStage(c, {
            environments: () => options.environmentNames(c.record.tenant, c.record.project),
            versions: () => options.toolVersions(c.record.tenant, c.record.tool.id),
          }),
      },
      { name: 'permission', run: (c) => permissionStage(validated(c)) },
      { name: 'policy', run: (c) => policyStage(classified(c), options.policy) },
      { name: 'classification', run: (c) => classificationStage(classified(c)) },
      {
        name: 'approval',
        run: (c) => approvalStage(classified(c), options.policy, options.approvals),
      },
      {
        name: 'credentials',
        run: (c) => credentialsStage(validated(c), options.broker, this.timeoutOf(c)),
      },
      {
        name: 'sandbox',
        run: (c) =>
          sandboxStage(validated(c), options.executors, options.leases, this.timeoutOf(c)),
      },
      {
        name: 'execute',
        run: (c) =>
          executeStage(
            classified(c),
            options.executors,
            this.timeoutOf(c),
            () =>
              new OutputCapture(
                options.artifacts,
                c.redactor.stream(),
                streamBound(options.maxOutputBytes),
                options.maxArtifactBytes,
              ),
            (bytes) => options.artifacts.put(bytes),
          ),
      },
      { name: 'sanitize', run: (c) => sanitizeStage(c, options.artifacts, options.maxOutputBytes) },
    ];
  }

  /**
   * Runs an invocation through the stages from `from` on and returns its record as stored.
   * A new call starts at validation; a call resuming with an approval (`ctx.approved`, already
   * recorded as awaiting) starts at the approval stage.
   */
  async run(ctx: PipelineContext, from: StageName = 'validation'): Promise<InvocationRecord> {
    const traced = new InvocationTrace(this.tracer, ctx.record, ctx.telemetry, this.options.log);
    ctx.tracing = traced;
    try {
      const record = await this.pass(ctx, from, traced);
      traced.end(record);
      return record;
    } catch (err) {
      traced.fail(err, ctx.redactor);
      // The pass ended and its outcome is not recorded (storage refused it, or a bug): whatever
      // storage holds of the call must not stay `running` until a restart. Unless another node
      // recorded this call first (its key, or its approval): what is stored is that node's to end.
      if (!lostToAnotherWriter(err)) this.options.pending?.add(ctx.record.tenant, ctx.record.id);
      throw err;
    } finally {
      // Each undo (revoke credentials; close egress, remove the workspace, release the lease) is
      // independent of the others: run them together, so their writes share one commit.
      await Promise.all(ctx.cleanup.splice(0).map((undo) => undo().catch(() => undefined)));
    }
  }

  private timeoutOf(ctx: PipelineContext): number {
    return validated(ctx).tool.stored.descriptor.timeoutMs ?? this.options.defaultTimeoutMs;
  }

  private async pass(
    ctx: PipelineContext,
    from: StageName,
    traced: InvocationTrace,
  ): Promise<InvocationRecord> {
    ctx.markQueued = async () => {
      await this.save(ctx, 'queued');
    };
    if (from !== 'validation') classified(ctx);
    for (const step of this.steps.slice(this.steps.findIndex((s) => s.name === from))) {
      // A call that can act is recorded `running` before it may; so is any call already recorded
      // (queued for capacity, resumed from approval), whose stored state would otherwise say it
      // never started. Only a read never recorded goes from `new` straight to its outcome.
      if (
        step.name === 'execute' &&
        (classified(ctx).classification.effectiveClass !== 'read' ||
          ctx.savedTrace > 0 ||
          ctx.pendingAudit.length > 0)
      ) {
        await this.save(ctx, 'running');
      }
      const started = process.hrtime.bigint();
      const span = traced.stage(step.name);
      let result: StageResult;
      try {
        result = await step.run(ctx);
      } catch (err) {
        span.end('threw');
        throw err;
      }
      this.options.metrics?.stage(step.name, Number(process.hrtime.bigint() - started) / 1e9);
      const entry = this.record(ctx, step.name, result);
      span.end(entry.decision, 'code' in result ? result.code : undefined);
      switch (result.outcome) {
        case 'continue':
          continue;
        case 'deny':
          ctx.record.error = {
            code: result.code,
            message: result.reason,
            stage: step.name,
            ...(result.details ? { details: result.details } : {}),
          };
          return this.save(ctx, 'denied');
        case 'fail':
          ctx.record.error = {
            code: result.code,
            message: result.reason,
            stage: step.name,
            ...(result.details ? { details: result.details } : {}),
          };
          return this.save(ctx, 'failed');
        case 'suspend':
          return this.save(ctx, 'awaiting_approval');
      }
    }
    const execution = ctx.sanitized!.result;
    if (execution.status !== 'observed') {
      ctx.record.error = { code: execution.code, message: execution.message, stage: 'execute' };
    }
    return this.save(ctx, execution.status);
  }

  /** Ends a call that waits for approval as `denied` at the approval stage (rejected, expired…). */
  deny(ctx: PipelineContext, code: DenialCode, reason: string): Promise<InvocationRecord> {
    this.record(ctx, 'approval', { outcome: 'deny', code, reason });
    ctx.record.error = { code, message: reason, stage: 'approval' };
    return this.save(ctx, 'denied');
  }

  private record(ctx: PipelineContext, stage: StageName, result: StageResult): TraceEntry {
    const decision =
      stage === 'execute'
        ? ctx.execution!.status
        : result.outcome === 'continue'
          ? (result.decision ?? 'pass')
          : result.outcome;
    const entry: TraceEntry = {
      stage,
      decision,
      reason: result.reason,
      at: isoTime(this.options.clock.now()),
    };
    if (result.details) entry.details = result.details;
    ctx.record.trace.push(entry);
    return entry;
  }

  /**
   * Records the invocation in `status` with the stage decisions since its last record (the trace
   * entries after `ctx.savedTrace`). A step that decides the outcome also gets an `audit` trace
   * entry and a signed receipt.
   */
  private async save(ctx: PipelineContext, status: InvocationStatus): Promise<InvocationRecord> {
    const { record } = ctx;
    const recorded = ctx.savedTrace > 0;
    const stored = recorded ? record.status : 'new';
    const at = isoTime(this.options.clock.now());
    const final = enterStatus(record, stored, status, at);
    if (this.options.node !== undefined) record.node = this.options.node;
    const stages = record.trace.slice(ctx.savedTrace);
    const summary = invocationSummary(record, status);
    const events: StepParts['events'][number][] = [];
    const event = (type: EventType, data: Record<string, unknown>) =>
      events.push({ type, data: { ...summary, ...data } });
    if (!recorded)
      event(EventType.ToolInvocationRequested, {
        environment: record.environment,
        project: record.project,
      });
    if (ctx.pendingApproval) {
      const a = ctx.pendingApproval;
      event(EventType.ApprovalRequested, {
        approvalId: a.id,
        expiresAt: a.expiresAt,
        quorum: a.quorum,
        effectiveClass: a.effectiveClass,
      });
    }
    const error = record.error ? { error: record.error } : {};
    if (status === 'denied') event(EventType.ToolInvocationDenied, error);
    if (status === 'uncertain') event(EventType.ToolEffectUncertain, error);
    if (status === 'observed' || status === 'failed')
      event(EventType.ToolInvocationCompleted, error);
    // The call's parts' records go first (the leases issued; when it ends, their revocation), so
    // they share this commit; the leases end here, before the outcome is recorded.
    const before = ctx.pendingAudit.splice(0);
    const ended = final && ctx.credentials ? this.options.broker?.end(record.id) : undefined;
    if (ended) before.push(ended);
    const step = invocationStep({
      record,
      at,
      actor: record.principal,
      before,
      audit: {
        type: `invocation.${status}`,
        data: {
          ...summary,
          ...(recorded
            ? {}
            : {
                project: record.project,
                environment: record.environment,
                input: record.input,
                idempotencyKey: record.idempotencyKey,
                attempt: record.attempt,
              }),
          effectiveClass: record.effectiveClass,
          descriptorDigest: record.tool.descriptorDigest,
          stages,
          ...(record.approvalId ? { approvalId: record.approvalId } : {}),
          ...error,
          ...(record.outputInfo ? { output: record.outputInfo } : {}),
        },
      },
      events,
      ...(final ? { signer: this.options.signer } : {}),
    });
    // Fenced: the step is written only if the call is still as this pass last stored it. Another
    // node that took this one for dead (or the expiry of its approval) may have settled it since.
    if (stored !== 'new') step.expectedStatus = stored;
    if (ctx.pendingApproval) step.approval = ctx.pendingApproval;
    if (ctx.approved && record.approval === null) {
      step.consumeApproval = ctx.approved.id;
      record.approval = approvalSummary(ctx.approved);
    }
    const span = final ? ctx.tracing?.stage('audit') : undefined;
    try {
      await this.options.store.save(step);
    } catch (err) {
      if (step.consumeApproval) record.approval = null;
      span?.end('threw');
      if (isSettledMeanwhile(err)) {
        // What this pass saw is evidence for whoever resolves the settled call: in the log.
        (ctx.telemetry?.log ?? this.options.log)?.error(
          {
            invocationId: record.id,
            tenant: record.tenant,
            lateStatus: status,
            error: record.error,
          },
          'a call was settled elsewhere before this pass could record its outcome; the outcome it saw is not recorded',
        );
      }
      throw err;
    }
    span?.end('recorded');
    ctx.pendingApproval = undefined;
    ctx.savedTrace = record.trace.length;
    if (final) this.options.metrics?.outcome(metricToolLabel(record.tool), status);
    return record;
  }
}

function approvalSummary(
  a: NonNullable<PipelineContext['approved']>,
): NonNullable<InvocationRecord['approval']> {
  return {
    id: a.id,
    approvers: a.decisions
      .filter((d) => d.decision === 'approve')
      .map((d) => ({ principal: d.principal, at: d.at })),
    decidedAt: a.decidedAt ?? '',
  };
}

/**
 * What each output stream of a tool (stdout, stderr) keeps in the record: half the output bound,
 * less room for the rest of the output (exit code, usage, truncation notes), so a cut stream still
 * leaves the structured output within the bound and its artifact in view.
 */
function streamBound(maxOutputBytes: number): number {
  return Math.max(256, Math.floor((maxOutputBytes - 1024) / 2));
}

/** `ctx` validated, with its effective class (classified the first time it is asked for). */
function classified(ctx: PipelineContext): ClassifiedContext {
  const v = validated(ctx);
  if (!v.classification) {
    v.classification = classifySideEffect(v.tool.stored.descriptor, v.record.input, v.environment);
    v.record.effectiveClass = v.classification.effectiveClass;
  }
  return v as ClassifiedContext;
}
