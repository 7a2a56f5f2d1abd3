import { describe, expect, it } from 'vitest';
import { loadConfig, loadTracingConfig } from '../../src/app/index.js';

describe('tracing from the standard OTEL_* variables', () => {
  it('is off when nothing is configured, and when the SDK or the exporter is turned off', () => {
    expect(loadTracingConfig({})).toBeNull();
    const endpoint = { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4318' };
    expect(loadTracingConfig({ ...endpoint, OTEL_SDK_DISABLED: 'true' })).toBeNull();
    expect(loadTracingConfig({ ...endpoint, OTEL_TRACES_EXPORTER: 'none' })).toBeNull();
    expect(loadConfig({ dataDir: '/tmp/gatehouse-config-test' }, {}).tracing).toBeNull();
  });

  it('an endpoint turns it on: /v1/traces appended, protobuf by default, headers and resource read', () => {
    const t = loadTracingConfig({
      OTEL_EXPORTER_OTLP_ENDPOINT: 'https://collector.example:4318/',
      OTEL_EXPORTER_OTLP_HEADERS: 'x-api-key=a%20b,tenant=acme',
      OTEL_RESOURCE_ATTRIBUTES: 'deployment.environment=prod,service.name=gh',
      OTEL_TRACES_SAMPLER: 'parentbased_traceidratio',
      OTEL_TRACES_SAMPLER_ARG: '0.25',
    });
    expect(t).toMatchObject({
      url: 'https://collector.example:4318/v1/traces',
      protocol: 'http/protobuf',
      headers: { 'x-api-key': 'a b', tenant: 'acme' },
      resourceAttributes: { 'deployment.environment': 'prod' },
      serviceName: 'gh',
      sampler: 'parentbased_traceidratio',
      samplerRatio: 0.25,
      timeoutMs: 10_000,
    });
  });

  it('the traces endpoint is taken as is, OTEL_SERVICE_NAME wins, otlp alone means the local collector', () => {
    expect(
      loadTracingConfig({
        OTEL_EXPORTER_OTLP_ENDPOINT: 'http://ignored:4318',
        OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://127.0.0.1:9999/custom',
        OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: 'http/json',
        OTEL_SERVICE_NAME: 'gatehouse-eu',
      }),
    ).toMatchObject({
      url: 'http://127.0.0.1:9999/custom',
      protocol: 'http/json',
      serviceName: 'gatehouse-eu',
    });
    expect(loadTracingConfig({ OTEL_TRACES_EXPORTER: 'otlp' })).toMatchObject({
      url: 'http://localhost:4318/v1/traces',
      serviceName: 'gatehouse',
    });
  });

  it('refuses what it cannot do, naming the variable and the forms it takes', () => {
    const on = { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4318' };
    expect(() => loadTracingConfig({ OTEL_TRACES_EXPORTER: 'zipkin' })).toThrow(
      /OTEL_TRACES_EXPORTER must be otlp or none/,
    );
    expect(() => loadTracingConfig({ ...on, OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc' })).toThrow(
      /OTEL_EXPORTER_OTLP_PROTOCOL must be http\/protobuf or http\/json/,
    );
    expect(() => loadTracingConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: 'collector:4318' })).toThrow(
      /OTEL_EXPORTER_OTLP_ENDPOINT must be an http:\/\/ or https:\/\/ URL/,
    );
    expect(() => loadTracingConfig({ ...on, OTEL_TRACES_SAMPLER_ARG: '2' })).toThrow(
      /OTEL_TRACES_SAMPLER_ARG must be a ratio between 0 and 1/,
    );
    expect(() => loadTracingConfig({ ...on, OTEL_EXPORTER_OTLP_HEADERS: '=x' })).toThrow(
      /OTEL_EXPORTER_OTLP_HEADERS must be a list of key=value pairs/,
    );
  });
});

describe('log level', () => {
  it('is info by default, read from GATEHOUSE_LOG_LEVEL, and refused when unknown', () => {
    const load = (env: NodeJS.ProcessEnv) =>
      loadConfig({ dataDir: '/tmp/gatehouse-config-test' }, env);
    expect(load({}).logLevel).toBe('info');
    expect(load({ GATEHOUSE_LOG_LEVEL: 'debug' }).logLevel).toBe('debug');
    expect(() => load({ GATEHOUSE_LOG_LEVEL: 'loud' })).toThrow(
      /GATEHOUSE_LOG_LEVEL must be one of fatal, error, warn, info, debug, trace, silent/,
    );
  });
});
