import { SpanStatusCode, isSpanContextValid } from '@opentelemetry/api';
import type { SpanContext, Tracer } from '@opentelemetry/api';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { errorBody } from './error-status.js';
import { translateFastifyError } from './fastify-errors.js';
import { callerSpanContext, startServerSpan, traceHeaders } from './trace-context.js';

declare module 'fastify' {
  interface FastifyRequest {
    /**
     * The span the request's work is a child of: its server span once a traced route runs, else
     * the caller's (from `traceparent`), else null.
     */
    traceParent: SpanContext | null;
  }
}

/**
 * Gives every request an `X-Request-Id` answer header and, when the caller sent a valid
 * `traceparent`, its trace id on every line the request logs.
 */
export function observeRequests(app: FastifyInstance): void {
  app.decorateRequest('traceParent', null);
  app.addHook('onRequest', (req, reply, done) => {
    void reply.header('x-request-id', req.id);
    const parent = callerSpanContext(req.headers);
    if (parent) {
      req.traceParent = parent;
      logWith(req, reply, { traceId: parent.traceId });
    }
    done();
  });
}

/**
 * Serves a request inside its server span: the span is a child of the caller's, its context is
 * answered as `traceparent` and becomes the request's `traceParent` (the parent of an invocation
 * span), and its trace id goes on the request's log lines.
 */
export async function traceRoute(
  tracer: Tracer,
  route: string,
  req: FastifyRequest,
  reply: FastifyReply,
  serve: () => Promise<unknown>,
): Promise<unknown> {
  const span = startServerSpan(tracer, req.method, route, req.traceParent ?? undefined);
  const context = span.spanContext();
  if (isSpanContextValid(context)) {
    if (context.traceId !== req.traceParent?.traceId)
      logWith(req, reply, { traceId: context.traceId });
    req.traceParent = context;
    for (const [name, value] of Object.entries(traceHeaders(context)))
      void reply.header(name, value);
  }
  try {
    const body = await serve();
    span.setAttribute('http.response.status_code', reply.statusCode);
    return body;
  } catch (err) {
    const { status } = errorBody(translateFastifyError(err, 'this gateway'));
    span.setAttribute('http.response.status_code', status);
    if (status >= 500) span.setStatus({ code: SpanStatusCode.ERROR });
    throw err;
  } finally {
    span.end();
  }
}

/** Adds fields to every later line of the request's log (the reply logs through its own copy). */
function logWith(req: FastifyRequest, reply: FastifyReply, fields: Record<string, unknown>): void {
  const log = req.log.child(fields);
  req.log = log;
  reply.log = log;
}
