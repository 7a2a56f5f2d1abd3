import {
  ProxyTracerProvider,
  ROOT_CONTEXT,
  SpanStatusCode,
  isSpanContextValid,
  trace,
} from '@opentelemetry/api';
import type { Attributes, Context, Span, SpanContext, Tracer } from '@opentelemetry/api';
import type { Redactor } from '../secrets/index.js';
import type { InvocationRecord } from './invocation-record.js';

/** A structured log (pino's `Logger` fits): one JSON line per call, fields first. */
export interface InvocationLog {
  info(fields: Record<string, unknown>, message: string): void;
  error(fields: Record<string, unknown>, message: string): void;
  /** A log whose every line also carries `fields`. */
  child(fields: Record<string, unknown>): InvocationLog;
}

/**
 * Where one pass of a call reports, from the request that caused it: the caller's span (the
 * invocation span becomes its child) and the request's log (its lines carry the request id).
 * Never part of the request or its hash; a retry with the same key may bring another.
 */
export interface InvocationTelemetry {
  parent?: SpanContext;
  /** Its lines already carry the parent's `traceId` when there is a parent. */
  log?: InvocationLog;
  /** The caller's live channel while it waits (an MCP session's request), for the executor. */
  caller?: CallerChannel;
}

/**
 * What reaches the caller while its call runs, for executors that relay it (MCP upstreams): only
 * during the pass the caller's request started, never stored.
 */
export interface CallerChannel {
  /** The tool's progress; set only when the caller asked for it (an MCP `progressToken`). */
  progress?: (p: { progress: number; total?: number; message?: string }) => void;
  /**
   * Sends a request of the tool to the caller (an MCP upstream's `sampling/createMessage` or
   * `elicitation/create`) and resolves with the caller's answer. Rejects with a
   * {@link CallerRefusal} when the caller cannot take it (its client did not declare the
   * capability), else with the caller's error or a timeout after `timeoutMs`.
   */
  ask?: (
    request: { method: string; params: Record<string, unknown> },
    options: { signal: AbortSignal; timeoutMs: number },
  ) => Promise<Record<string, unknown>>;
}

/** A caller's refusal to take a request of the tool: nothing was sent to it. */
export class CallerRefusal extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'CallerRefusal';
  }
}

/**
 * A request a tool sent its caller through the gateway and what became of it, as the call's
 * trace records it (request and answer bounded; the trace is sanitized like the output).
 */
export interface CallerInteraction {
  method: string;
  /** ISO 8601 time the request came. */
  at: string;
  /** `answered` by the caller, `refused` by the gateway or caller, or `failed` (error, timeout). */
  outcome: 'answered' | 'refused' | 'failed';
  request: unknown;
  answer?: unknown;
  /** Why it was refused or failed. */
  error?: string;
}

/**
 * A tracer that records nothing (a provider without a delegate hands out the API's no-op tracer,
 * whatever is registered globally): what the pipeline uses when tracing is off. Its spans only
 * carry the parent's context, so a caller's trace id still reaches the log.
 */
export function noopTracer(): Tracer {
  return new ProxyTracerProvider().getTracer('gatehouse');
}

/** The span and log of one pass of the pipeline over a call. */
export class InvocationTrace {
  /** The invocation span; stage spans are its children. */
  readonly span: Span;
  /** The call's log: every line carries the invocation id and, when there is one, the trace id. */
  readonly log: InvocationLog | undefined;
  /** The context that makes the invocation span the parent of each stage span. */
  readonly #context: Context;

  constructor(
    private readonly tracer: Tracer,
    record: InvocationRecord,
    telemetry: InvocationTelemetry | undefined,
    fallbackLog: InvocationLog | undefined,
  ) {
    const parent = telemetry?.parent;
    this.span = tracer.startSpan(
      'invocation',
      {
        attributes: {
          'gatehouse.invocation.id': record.id,
          'gatehouse.tenant': record.tenant,
          'gatehouse.project': record.project,
          'gatehouse.environment': record.environment,
          'gatehouse.tool.id': record.tool.id,
          'gatehouse.tool.version': record.tool.version,
          'gatehouse.agent.id': record.agent.id,
          'gatehouse.invocation.attempt': record.attempt,
        },
      },
      parent ? trace.setSpanContext(ROOT_CONTEXT, parent) : ROOT_CONTEXT,
    );
    this.#context = trace.setSpan(ROOT_CONTEXT, this.span);
    const context = this.span.spanContext();
    // A trace id the log does not carry yet: a trace this span started (no parent, or no log
    // of the request's).
    const newTrace =
      isSpanContextValid(context) &&
      (telemetry?.log === undefined || context.traceId !== parent?.traceId);
    this.log = (telemetry?.log ?? fallbackLog)?.child({
      invocationId: record.id,
      ...(newTrace ? { traceId: context.traceId } : {}),
    });
  }

  /** A child span of the invocation span, for one stage. */
  stage(name: string): StageSpan {
    return new StageSpan(
      this.tracer.startSpan(
        `stage ${name}`,
        { attributes: { 'gatehouse.stage': name } },
        this.#context,
      ),
    );
  }

  /** Ends the invocation span with the status the pass left the call in, and logs it. */
  end(record: InvocationRecord): void {
    this.span.setAttribute('gatehouse.invocation.status', record.status);
    if (record.effectiveClass)
      this.span.setAttribute('gatehouse.effective_class', record.effectiveClass);
    if (record.error) this.span.setAttribute('gatehouse.error.code', record.error.code);
    if (record.status === 'failed' || record.status === 'uncertain')
      this.span.setStatus({ code: SpanStatusCode.ERROR, message: record.error?.code ?? '' });
    this.span.end();
    this.log?.info(
      {
        tool: `${record.tool.id}@${record.tool.version}`,
        status: record.status,
        ...(record.error ? { code: record.error.code, stage: record.error.stage } : {}),
      },
      `invocation ${record.status}`,
    );
  }

  /**
   * Ends the invocation span of a pass that threw (a bug or a storage failure) and logs the cause,
   * its message and stack passed through the call's redactor: they may quote tool data.
   */
  fail(err: unknown, redactor: Redactor): void {
    const e = err instanceof Error ? err : new Error(String(err));
    const message = redactor.redactText(e.message).text;
    const stack = redactor.redactText(e.stack ?? '').text;
    this.span.recordException({ name: e.name, message, stack });
    this.span.setStatus({ code: SpanStatusCode.ERROR, message });
    this.span.end();
    this.log?.error(
      { err: { type: e.name, message, stack, code: (e as { code?: unknown }).code } },
      'invocation pass failed',
    );
  }
}

/** The span of one stage of one pass. */
export class StageSpan {
  constructor(private readonly span: Span) {}

  /**
   * Ends the span with the stage's decision (and code, when it denied or failed); `threw` when the
   * stage threw instead of deciding. A failure, an uncertain effect or a throw marks it an error.
   */
  end(decision: string, code?: string): void {
    const attributes: Attributes = { 'gatehouse.stage.decision': decision };
    if (code !== undefined) attributes['gatehouse.stage.code'] = code;
    this.span.setAttributes(attributes);
    if (ERRORS.has(decision))
      this.span.setStatus({ code: SpanStatusCode.ERROR, ...(code ? { message: code } : {}) });
    this.span.end();
  }
}

const ERRORS = new Set(['fail', 'failed', 'uncertain', 'threw']);
