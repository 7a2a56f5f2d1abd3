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
import { OtlpProtocol } from './tracing-config.js';
import type { TracingConfig } from './tracing-config.js';
import type { Tracing } from './tracing.js';

/** The tracer of a gateway that exports: spans batched and sent over OTLP/HTTP as configured. */
export function otlpTracing(config: TracingConfig, version: string): Tracing {
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
