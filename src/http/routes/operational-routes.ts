import type { Route } from '../route.js';
import type { GatewayServices } from '../services.js';

/**
 * Liveness, readiness, Prometheus metrics and the OpenAPI document itself: public, and in the
 * route table like every other route, so the document lists them.
 */
export function operationalRoutes(
  s: GatewayServices,
  openapi: () => Record<string, unknown>,
): Route[] {
  return [
    {
      method: 'GET',
      url: '/healthz',
      tag: 'operations',
      summary: 'Liveness: the process answers',
      responses: { '200': '{status: "ok"}' },
      handler: () => ({ status: 200, body: { status: 'ok' } }),
    },
    {
      method: 'GET',
      url: '/readyz',
      tag: 'operations',
      summary:
        'Readiness: serving, storage accepting writes, and whether sandboxed tools can run (and if not, why)',
      responses: {
        '200': '{status: "ready", storage: "ok", sandbox: "ok" or why sandboxed tools cannot run}',
        '503': '{status: "starting or stopping" or "storage failing", storage, sandbox}',
      },
      handler: () => {
        const sandbox = s.sandbox() ?? 'ok';
        const storage = s.storage?.() ?? null;
        if (!s.ready())
          return {
            status: 503,
            body: { status: 'starting or stopping', storage: storage ?? 'ok', sandbox },
          };
        return storage === null
          ? { status: 200, body: { status: 'ready', storage: 'ok', sandbox } }
          : { status: 503, body: { status: 'storage failing', storage, sandbox } };
      },
    },
    {
      method: 'GET',
      url: '/metrics',
      tag: 'operations',
      summary: 'Prometheus metrics: invocations by tool and status, stage latencies, MCP refusals',
      responseType: 'text/plain; version=0.0.4',
      responses: { '200': 'the Prometheus text format' },
      handler: async () => ({
        status: 200,
        body: await s.metrics.text(),
        contentType: 'text/plain; version=0.0.4',
      }),
    },
    {
      method: 'GET',
      url: '/openapi.json',
      tag: 'operations',
      summary: 'This document: every route the gateway serves',
      responses: { '200': 'the OpenAPI 3.1 document' },
      handler: () => ({ status: 200, body: openapi() }),
    },
  ];
}
