import { ErrorCode, GatehouseError } from '../core/index.js';
import { envInteger } from './env-integer.js';

/** The OTLP protocols spans can be exported with (OTLP over HTTP; gRPC is not built in). */
export const OtlpProtocol = { json: 'http/json', protobuf: 'http/protobuf' } as const;
export type OtlpProtocol = (typeof OtlpProtocol)[keyof typeof OtlpProtocol];

/** The samplers of the OpenTelemetry specification that `OTEL_TRACES_SAMPLER` may name. */
const SAMPLERS = [
  'always_on',
  'always_off',
  'traceidratio',
  'parentbased_always_on',
  'parentbased_always_off',
  'parentbased_traceidratio',
] as const;
export type SamplerName = (typeof SAMPLERS)[number];

/** Where and how spans are exported; read from the standard `OTEL_*` variables. */
export interface TracingConfig {
  /** The OTLP/HTTP traces endpoint (full URL, `…/v1/traces`). */
  url: string;
  protocol: OtlpProtocol;
  /** Headers sent with each export (`OTEL_EXPORTER_OTLP_HEADERS`), e.g. an API key. */
  headers: Record<string, string>;
  /** Export timeout in milliseconds. */
  timeoutMs: number;
  /** `service.name` of the spans. */
  serviceName: string;
  /** Further resource attributes (`OTEL_RESOURCE_ATTRIBUTES`). */
  resourceAttributes: Record<string, string>;
  sampler: SamplerName;
  /** The ratio of the `…traceidratio` samplers, in [0, 1]. */
  samplerRatio: number;
}

/**
 * The tracing configuration from the OpenTelemetry environment variables, or null when tracing is
 * off: off unless `OTEL_TRACES_EXPORTER=otlp` or an OTLP endpoint is set, and always off with
 * `OTEL_SDK_DISABLED=true` or `OTEL_TRACES_EXPORTER=none`.
 * @throws GatehouseError INVALID_INPUT naming the variable that does not parse.
 */
export function loadTracingConfig(env: NodeJS.ProcessEnv): TracingConfig | null {
  if (value(env.OTEL_SDK_DISABLED)?.toLowerCase() === 'true') return null;
  const exporter = value(env.OTEL_TRACES_EXPORTER)?.toLowerCase();
  const tracesEndpoint = value(env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT);
  const endpoint = value(env.OTEL_EXPORTER_OTLP_ENDPOINT);
  if (exporter === 'none') return null;
  if (exporter !== undefined && exporter !== 'otlp')
    throw invalid(
      'OTEL_TRACES_EXPORTER',
      exporter,
      'otlp or none (spans are exported over OTLP/HTTP only)',
    );
  if (exporter === undefined && tracesEndpoint === undefined && endpoint === undefined) return null;
  const url =
    tracesEndpoint ??
    (endpoint === undefined
      ? 'http://localhost:4318/v1/traces'
      : `${endpoint.replace(/\/+$/, '')}/v1/traces`);
  checkUrl(
    url,
    tracesEndpoint === undefined
      ? 'OTEL_EXPORTER_OTLP_ENDPOINT'
      : 'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT',
  );
  const resourceAttributes = pairs(env.OTEL_RESOURCE_ATTRIBUTES, 'OTEL_RESOURCE_ATTRIBUTES');
  return {
    url,
    protocol: protocol(env),
    headers: {
      ...pairs(env.OTEL_EXPORTER_OTLP_HEADERS, 'OTEL_EXPORTER_OTLP_HEADERS'),
      ...pairs(env.OTEL_EXPORTER_OTLP_TRACES_HEADERS, 'OTEL_EXPORTER_OTLP_TRACES_HEADERS'),
    },
    timeoutMs:
      millis(env.OTEL_EXPORTER_OTLP_TRACES_TIMEOUT, 'OTEL_EXPORTER_OTLP_TRACES_TIMEOUT') ??
      millis(env.OTEL_EXPORTER_OTLP_TIMEOUT, 'OTEL_EXPORTER_OTLP_TIMEOUT') ??
      10_000,
    serviceName: value(env.OTEL_SERVICE_NAME) ?? resourceAttributes['service.name'] ?? 'gatehouse',
    resourceAttributes,
    ...sampler(env),
  };
}

function value(v: string | undefined): string | undefined {
  const t = v?.trim();
  return t === undefined || t === '' ? undefined : t;
}

function invalid(name: string, got: string, expected: string): GatehouseError {
  return new GatehouseError(
    ErrorCode.INVALID_INPUT,
    `${name} must be ${expected}; got ${JSON.stringify(got)}.`,
  );
}

function checkUrl(url: string, name: string): void {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw invalid(name, url, 'an http:// or https:// URL');
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:')
    throw invalid(name, url, 'an http:// or https:// URL');
}

function protocol(env: NodeJS.ProcessEnv): OtlpProtocol {
  const name =
    value(env.OTEL_EXPORTER_OTLP_TRACES_PROTOCOL) === undefined
      ? 'OTEL_EXPORTER_OTLP_PROTOCOL'
      : 'OTEL_EXPORTER_OTLP_TRACES_PROTOCOL';
  const p = value(env[name]) ?? OtlpProtocol.protobuf;
  if (p !== OtlpProtocol.json && p !== OtlpProtocol.protobuf)
    throw invalid(name, p, 'http/protobuf or http/json (gRPC export is not built in)');
  return p;
}

/** `key=value,key2=value2`, values percent-decoded (the W3C Baggage form the spec names). */
function pairs(v: string | undefined, name: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const part of (v ?? '').split(',')) {
    if (part.trim() === '') continue;
    const eq = part.indexOf('=');
    const key = eq > 0 ? part.slice(0, eq).trim() : '';
    if (key === '') throw invalid(name, v ?? '', 'a list of key=value pairs separated by commas');
    try {
      out[key] = decodeURIComponent(part.slice(eq + 1).trim());
    } catch {
      throw invalid(name, v ?? '', 'a list of key=value pairs with percent-encoded values');
    }
  }
  return out;
}

function millis(v: string | undefined, name: string): number | undefined {
  return envInteger(value(v), name, 'a whole number of milliseconds');
}

function sampler(env: NodeJS.ProcessEnv): { sampler: SamplerName; samplerRatio: number } {
  const name = value(env.OTEL_TRACES_SAMPLER)?.toLowerCase() ?? 'parentbased_always_on';
  if (!(SAMPLERS as readonly string[]).includes(name))
    throw invalid('OTEL_TRACES_SAMPLER', name, `one of ${SAMPLERS.join(', ')}`);
  const arg = value(env.OTEL_TRACES_SAMPLER_ARG);
  const ratio = arg === undefined ? 1 : Number(arg);
  if (!Number.isFinite(ratio) || ratio < 0 || ratio > 1)
    throw invalid('OTEL_TRACES_SAMPLER_ARG', arg ?? '', 'a ratio between 0 and 1');
  return { sampler: name as SamplerName, samplerRatio: ratio };
}
