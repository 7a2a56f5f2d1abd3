import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { loadTracingConfig } from '../../src/app/index.js';
import { call, startDemoGateway } from '../helpers/gateway-fixture.js';
import type { DemoGateway } from '../helpers/gateway-fixture.js';
import { OtlpReceiver } from '../helpers/otlp-receiver.js';
import { connectMcp } from '../helpers/mcp-client.js';
import type { ExportedSpan } from '../helpers/otlp-receiver.js';

const CALLER_TRACE = '4bf92f3577b34da6a3ce929d0e0e4736';
const CALLER_SPAN = '00f067aa0ba902b7';
const TRACEPARENT = `00-${CALLER_TRACE}-${CALLER_SPAN}-01`;

let receiver: OtlpReceiver;
let g: DemoGateway | undefined;
beforeEach(async () => {
  receiver = await OtlpReceiver.start();
});
afterEach(async () => {
  await g?.close();
  g = undefined;
  await receiver.close();
});

async function open(protocol: 'http/json' | 'http/protobuf', listen = false): Promise<DemoGateway> {
  g = await startDemoGateway({
    listen,
    config: {
      tracing: loadTracingConfig({
        OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
        OTEL_EXPORTER_OTLP_PROTOCOL: protocol,
        OTEL_SERVICE_NAME: 'gatehouse-under-test',
      }),
    },
  });
  return g;
}

function only(spans: ExportedSpan[], name: string): ExportedSpan {
  const found = spans.filter((s) => s.name === name);
  expect(found.map((s) => s.name)).toEqual([name]);
  return found[0]!;
}

describe(
  'OpenTelemetry traces (DESIGN §13), exported over OTLP/HTTP to a loopback receiver',
  { timeout: 120_000 },
  () => {
    it('a call is a server span, an invocation span and one child span per stage, in the caller’s trace', async () => {
      const gw = await open('http/json');
      const res = await gw.inject<{ id: string; status: string }>('POST', '/v1/invocations', {
        token: gw.tokens.agent,
        body: call('demo/echo', { message: 'traced' }),
        headers: { 'idempotency-key': 'trace-1', traceparent: TRACEPARENT },
      });
      expect(res.status).toBe(200);
      await gw.stop(); // flushes the batch of spans

      const spans = receiver.spans();
      expect(receiver.exports.every((e) => e.path === '/v1/traces')).toBe(true);
      expect(spans.every((s) => s.traceId === CALLER_TRACE)).toBe(true);
      expect(spans[0]?.resource['service.name']).toBe('gatehouse-under-test');

      const server = only(spans, 'POST /v1/invocations');
      expect(server.parentSpanId).toBe(CALLER_SPAN);
      expect(server.attributes['http.response.status_code']).toBe(200);
      // The answer names the server span, in the caller's trace.
      expect(res.headers.traceparent).toBe(`00-${CALLER_TRACE}-${server.spanId}-01`);

      const invocation = only(spans, 'invocation');
      expect(invocation.parentSpanId).toBe(server.spanId);
      expect(invocation.attributes).toMatchObject({
        'gatehouse.invocation.id': res.body.id,
        'gatehouse.tool.id': 'demo/echo',
        'gatehouse.tool.version': '1.0.0',
        'gatehouse.tenant': 'acme',
        'gatehouse.invocation.status': 'observed',
        'gatehouse.effective_class': 'read',
      });

      const stages = spans.filter((s) => s.name.startsWith('stage '));
      expect(stages.map((s) => s.name).sort()).toEqual(
        [
          'validation',
          'permission',
          'policy',
          'classification',
          'approval',
          'credentials',
          'sandbox',
          'execute',
          'sanitize',
          'audit',
        ]
          .map((n) => `stage ${n}`)
          .sort(),
      );
      for (const s of stages) expect(s.parentSpanId).toBe(invocation.spanId);
      expect(only(spans, 'stage execute').attributes['gatehouse.stage.decision']).toBe('observed');
      expect(only(spans, 'stage approval').attributes['gatehouse.stage.decision']).toBe(
        'not-required',
      );
      expect(only(spans, 'stage audit').attributes['gatehouse.stage.decision']).toBe('recorded');
    });

    it('a denial ends its stage span with the decision and code; no later stage runs', async () => {
      const gw = await open('http/json');
      const res = await gw.invoke(
        gw.tokens.agent,
        'trace-deny',
        call('demo/echo', { message: 1 }), // the schema wants a string
      );
      expect(res.status).toBe(422);
      await gw.stop();
      const spans = receiver.spans();
      const validation = only(spans, 'stage validation');
      expect(validation.attributes).toMatchObject({
        'gatehouse.stage.decision': 'deny',
        'gatehouse.stage.code': 'INVALID_INPUT',
      });
      expect(spans.some((s) => s.name === 'stage execute')).toBe(false);
      expect(only(spans, 'invocation').attributes['gatehouse.invocation.status']).toBe('denied');
      // Without a caller's traceparent the call starts a trace of its own, and answers it.
      const server = only(spans, 'POST /v1/invocations');
      expect(server.parentSpanId ?? '').toBe('');
      expect(res.headers.traceparent).toBe(`00-${server.traceId}-${server.spanId}-01`);
    });

    it('a tools/call on /mcp takes the caller’s trace from _meta traceparent', async () => {
      const gw = await open('http/json', true);
      const { client } = await connectMcp(`${gw.url!}/mcp`, gw.tokens.agent);
      try {
        const r = await client.callTool({
          name: 'demo_echo__1_0_0',
          arguments: { message: 'over mcp' },
          _meta: { traceparent: TRACEPARENT },
        });
        expect(r.isError ?? false).toBe(false);
      } finally {
        await client.close();
      }
      await gw.stop();
      const invocation = only(receiver.spans(), 'invocation');
      expect(invocation.traceId).toBe(CALLER_TRACE);
      expect(invocation.parentSpanId).toBe(CALLER_SPAN);
      expect(invocation.attributes['gatehouse.invocation.status']).toBe('observed');
    });

    it('exports OTLP protobuf by default (the specification’s default protocol)', async () => {
      const gw = await open('http/protobuf');
      await gw.inject('POST', '/v1/invocations', {
        token: gw.tokens.agent,
        body: call('demo/echo', { message: 'proto' }),
        headers: { 'idempotency-key': 'trace-proto', traceparent: TRACEPARENT },
      });
      await gw.stop();
      expect(receiver.exports.length).toBeGreaterThan(0);
      const e = receiver.exports[0]!;
      expect(e.path).toBe('/v1/traces');
      expect(e.contentType).toBe('application/x-protobuf');
      // Protobuf carries the ids as raw bytes and the names as UTF-8.
      const body = Buffer.concat(receiver.exports.map((x) => x.body));
      expect(body.includes(Buffer.from(CALLER_TRACE, 'hex'))).toBe(true);
      expect(body.includes(Buffer.from('stage validation'))).toBe(true);
      expect(body.includes(Buffer.from('gatehouse-under-test'))).toBe(true);
    });

    it('with tracing off nothing is exported, and a caller’s traceparent is still carried on', async () => {
      g = await startDemoGateway();
      const res = await g.inject('POST', '/v1/invocations', {
        token: g.tokens.agent,
        body: call('demo/echo', { message: 'off' }),
        headers: { 'idempotency-key': 'trace-off', traceparent: TRACEPARENT },
      });
      expect(res.status).toBe(200);
      expect(res.headers.traceparent).toBe(TRACEPARENT);
      const plain = await g.invoke(
        g.tokens.agent,
        'trace-off-2',
        call('demo/echo', { message: 'x' }),
      );
      expect(plain.headers.traceparent).toBeUndefined();
      await g.stop();
      expect(receiver.exports).toEqual([]);
    });
  },
);
