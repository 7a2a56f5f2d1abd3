import type { Tracer } from '@opentelemetry/api';
import { OTLPTraceExporter as OtlpJsonExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { OTLPTraceExporter as OtlpProtobufExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import { resourceFromAttributes } from '@opentelemetry/resources';
import {
  AlwaysOffSampler,
  AlwaysOnSampler,
  BasicTracerProvider,
  BatchSpanProcessor,
  ParentBasedSampler,
  TraceIdRatioBasedSampler,
} from '@opentelemetry/sdk-trace-base';
import type { Sampler } from '@opentelemetry/sdk-trace-base';
import { noopTracer } from '../invocation/index.js';
import { OtlpProtocol } from './tracing-config.js';
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
 * provider is registered: the tracer is passed to the parts that make spans.
 */
export function openTracing(config: TracingConfig | null, version: string): Tracing {
  if (config === null) return { tracer: noopTracer(), close: () => Promise.resolve() };
  const exporterOptions = {
    url: config.url,
    headers: config.headers,
    timeoutMillis: config.timeoutMs,
  };
  const exporter =
    config.protocol === OtlpProtocol.json
      ? new OtlpJsonExporter(exporterOptions)
      : new OtlpProtobufExporter(exporterOptions);
  const provider = new BasicTracerProvider({
    resource: resourceFromAttributes({
      ...config.resourceAttributes,
      'service.name': config.serviceName,
      'service.version': version,
    }),
    sampler: sampler(config),
    spanProcessors: [new BatchSpanProcessor(exporter)],
  });
  let closing: Promise<void> | undefined;
  return {
    tracer: provider.getTracer('gatehouse', version),
    close: () => (closing ??= provider.shutdown()),
  };
}

function sampler(config: TracingConfig): Sampler {
  const ratio = new TraceIdRatioBasedSampler(config.samplerRatio);
  switch (config.sampler) {
    case 'always_on':
      return new AlwaysOnSampler();
    case 'always_off':
      return new AlwaysOffSampler();
    case 'traceidratio':
      return ratio;
    case 'parentbased_always_on':
      return new ParentBasedSampler({ root: new AlwaysOnSampler() });
    case 'parentbased_always_off':
      return new ParentBasedSampler({ root: new AlwaysOffSampler() });
    case 'parentbased_traceidratio':
      return new ParentBasedSampler({ root: ratio });
  }
}
