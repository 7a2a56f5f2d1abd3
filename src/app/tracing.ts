import type { Tracer } from '@opentelemetry/api';
import { noopTracer } from '../invocation/index.js';
import type { TracingConfig } from './tracing-config.js';

/** The gateway's tracer and what ends it. */
export interface Tracing {
  tracer: Tracer;
  /** Exports the spans still buffered, then stops. Safe to call twice. */
  close(): Promise<void>;
}

/**
 * The tracer of a gateway: spans batched and exported over OTLP/HTTP as configured, or, when
 * tracing is off (`config` null), the API's no-op tracer, which allocates no span data. No global
 * provider is registered: the tracer is passed to the parts that make spans. The SDK and its
 * exporters (some two hundred modules) are loaded only when tracing is on, so a gateway without it
 * starts without them.
 */
export async function openTracing(config: TracingConfig | null, version: string): Promise<Tracing> {
  if (config === null) return { tracer: noopTracer(), close: () => Promise.resolve() };
  const { otlpTracing } = await import('./otlp-tracing.js');
  return otlpTracing(config, version);
}
