import { ROOT_CONTEXT, SpanKind, isSpanContextValid, trace } from '@opentelemetry/api';
import type { Span, SpanContext, TextMapGetter, TextMapSetter, Tracer } from '@opentelemetry/api';
import { W3CTraceContextPropagator } from '@opentelemetry/core';

const propagator = new W3CTraceContextPropagator();

/** Reads a carrier of header-like values; a repeated header counts by its first value. */
const getter: TextMapGetter<Record<string, unknown>> = {
  keys: (carrier) => Object.keys(carrier),
  get: (carrier, key) => {
    const v = carrier[key];
    const first: unknown = Array.isArray(v) ? v[0] : v;
    return typeof first === 'string' ? first : undefined;
  },
};

const setter: TextMapSetter<Record<string, string>> = {
  set: (carrier, key, value) => {
    carrier[key] = value;
  },
};

/**
 * The caller's span context from W3C Trace Context fields (`traceparent`, `tracestate`), as HTTP
 * headers or MCP `_meta` carry them; undefined when absent or malformed (a malformed
 * `traceparent` is ignored, as the W3C recommendation asks, and a new trace starts).
 */
export function callerSpanContext(carrier: Record<string, unknown>): SpanContext | undefined {
  const context = trace.getSpanContext(propagator.extract(ROOT_CONTEXT, carrier, getter));
  return context && isSpanContextValid(context) ? context : undefined;
}

/** The `traceparent` (and `tracestate`, when there is one) that names a span to the next hop. */
export function traceHeaders(context: SpanContext): Record<string, string> {
  const carrier: Record<string, string> = {};
  if (isSpanContextValid(context))
    propagator.inject(trace.setSpanContext(ROOT_CONTEXT, context), carrier, setter);
  return carrier;
}

/**
 * The server span of one REST request, a child of the caller's span when it sent one. With the
 * no-op tracer it records nothing and carries the caller's context on.
 */
export function startServerSpan(
  tracer: Tracer,
  method: string,
  route: string,
  parent: SpanContext | undefined,
): Span {
  return tracer.startSpan(
    `${method} ${route}`,
    {
      kind: SpanKind.SERVER,
      attributes: { 'http.request.method': method, 'http.route': route },
    },
    parent ? trace.setSpanContext(ROOT_CONTEXT, parent) : ROOT_CONTEXT,
  );
}
