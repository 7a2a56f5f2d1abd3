import { headersForOrigin } from '../../core/index.js';
import { PinnedFetchError, compressedAnswer } from '../../egress/index.js';
import type { GatewayEgressOpening, PinnedFetch } from '../../egress/index.js';
import type {
  ExecutionReport,
  ExecutionRequest,
  Executor,
  LeaseNeed,
} from '../../invocation/index.js';
import { abortCode } from '../../invocation/index.js';
import type { ToolDescriptor } from '../../tools/index.js';
import { DEFAULT_FAILURE_STATUSES, httpExecution, httpExecutionProblem } from './http-execution.js';
import { planHttpRequest, upstreamIdempotencyKey } from './http-request.js';
import type { HttpRequestPlan } from './http-request.js';
import { bodyMessage, httpOutput, readBody } from './http-response.js';

/** Options of {@link HttpExecutor}. */
export interface HttpExecutorOptions {
  /** The gateway's egress: allow-list, DNS resolved once and pinned, non-public refused. */
  egress: { open(url: URL, method: string): Promise<GatewayEgressOpening> };
  /** Largest request body in bytes; default 1 MiB. */
  maxRequestBytes?: number;
  /** Same-origin redirects a GET or HEAD follows; default 5. */
  maxRedirects?: number;
}

/**
 * Runs `http` descriptors: one request from the gateway through its checked egress, with
 * brokered credentials as headers. It reports 2xx as observed; a declared failure status as
 * stopped before any effect; a timeout, a connection lost after the request was sent, or an
 * undeclared status as stopped with an effect that may have started (judgeExecution makes that
 * uncertain for a call that can change things, failed for a read). Nothing is retried. A
 * write-class call sends an `Idempotency-Key` that is the same on every attempt of the request.
 */
export class HttpExecutor implements Executor {
  readonly lease: LeaseNeed = {
    kind: 'none',
    why: 'HTTP tools are requests the gateway sends through its checked egress',
  };
  private readonly maxRequestBytes: number;
  private readonly maxRedirects: number;

  constructor(private readonly options: HttpExecutorOptions) {
    this.maxRequestBytes = options.maxRequestBytes ?? 1024 * 1024;
    this.maxRedirects = options.maxRedirects ?? 5;
  }

  check(d: ToolDescriptor): string | null {
    return httpExecutionProblem(d);
  }

  async execute(req: ExecutionRequest): Promise<ExecutionReport> {
    const c = httpExecution(req.descriptor);
    let plan: HttpRequestPlan;
    try {
      plan = planHttpRequest(c, req.input);
    } catch (err) {
      return notSent('INVALID_REQUEST', (err as Error).message);
    }
    if (plan.body !== undefined && Buffer.byteLength(plan.body) > this.maxRequestBytes)
      return notSent(
        'REQUEST_TOO_LARGE',
        `the request body is ${Buffer.byteLength(plan.body)} bytes, over the bound of ${this.maxRequestBytes}; nothing was sent`,
      );
    const write = req.effectiveClass !== 'read';
    if (write)
      plan.headers['idempotency-key'] = upstreamIdempotencyKey(
        req.tenant,
        req.idempotencyKey,
        req.requestHash,
      );
    // Only to the exact origin each is bound to; a redirect never leaves that origin (send).
    const brokered = headersForOrigin(req.headers ?? [], plan.url);
    Object.assign(plan.headers, brokered);

    const opened = await this.options.egress.open(plan.url, plan.method);
    req.onEgress?.(opened.decision);
    if (opened.fetch === undefined)
      return notSent('EGRESS_REFUSED', `${opened.decision.reason}; nothing was sent`);
    try {
      return await this.send(req, plan, opened.fetch, Object.keys(brokered).length > 0);
    } finally {
      opened.fetch.close();
    }
  }

  private async send(
    req: ExecutionRequest,
    plan: HttpRequestPlan,
    pinned: PinnedFetch,
    credentialed: boolean,
  ): Promise<ExecutionReport> {
    let url = plan.url;
    let response: Response;
    for (let redirects = 0; ; redirects++) {
      try {
        response = await pinned.fetch(url, {
          method: plan.method,
          headers: plan.headers,
          ...(plan.body === undefined ? {} : { body: plan.body }),
          signal: req.signal,
          redirect: 'manual',
        });
      } catch (err) {
        return lost(req, err, 'before any response');
      }
      const location = response.headers.get('location');
      const follow =
        response.status >= 300 &&
        response.status < 400 &&
        location !== null &&
        (plan.method === 'GET' || plan.method === 'HEAD');
      if (!follow) break;
      await response.body?.cancel().catch(() => undefined);
      let target: URL;
      try {
        target = new URL(location, url);
      } catch {
        return refusedRedirect(
          `the upstream redirected to an unusable location ${JSON.stringify(location.slice(0, 200))}`,
        );
      }
      if (target.origin !== url.origin) {
        req.onEgress?.({
          at: new Date().toISOString(),
          method: plan.method,
          host: target.hostname,
          port: Number(target.port || (target.protocol === 'https:' ? 443 : 80)),
          allowed: false,
          reason: `a redirect from ${url.origin} to another origin (${target.origin}) is not followed`,
        });
        return refusedRedirect(
          `the upstream answered ${response.status} redirecting to ${target.origin}, another origin; redirects leave the origin never`,
        );
      }
      if (redirects >= this.maxRedirects)
        return refusedRedirect(`more than ${this.maxRedirects} redirects`);
      url = target;
    }
    // Only a brokered header that went out can come back hidden in a compressed body; one bound
    // to another origin was never sent, so it gives no reason to withhold (redirects stay within
    // the origin, so what was sent to the first URL is what every hop got).
    const withheld = credentialed
      ? compressedAnswer(response.headers.get('content-encoding'))
      : null;
    if (withheld !== null) await response.body?.cancel().catch(() => undefined);
    const body = withheld !== null ? { captured: null } : await readBody(response, req.capture());
    if (body.error !== undefined) return lost(req, body.error, 'while the response body arrived');
    const { output, full } = httpOutput(response, body.captured);
    if (withheld !== null) output.bodyWithheld = withheld;
    const extra = full === undefined ? {} : { full };
    const status = response.status;
    if (status >= 200 && status < 300) return { status: 'observed', output, ...extra };
    const declared = (
      httpExecution(req.descriptor).failureStatuses ?? DEFAULT_FAILURE_STATUSES
    ).includes(status);
    const said = bodyMessage(output.body);
    const message = `the upstream answered ${status}${said === '' ? '' : ` (${said})`}`;
    return {
      status: 'stopped',
      code: `HTTP_${status}`,
      output,
      ...extra,
      ...(declared
        ? {
            message: `${message}, which the descriptor declares a failure before any effect`,
            effectMayHaveStarted: false,
          }
        : {
            message,
            effectMayHaveStarted: true,
            uncertainNote: `the descriptor does not declare ${status} a failure, so an effect may have happened`,
          }),
    };
  }
}

/** A call that stopped before its request was sent. */
function notSent(code: string, message: string): ExecutionReport {
  return { status: 'stopped', code, message, effectMayHaveStarted: false };
}

/**
 * A redirect not followed: only GET and HEAD follow redirects, and a GET or HEAD changes nothing
 * by the design of HTTP, so what was sent had no effect the descriptor counts on.
 */
function refusedRedirect(message: string): ExecutionReport {
  return notSent('REDIRECT_REFUSED', message);
}

/**
 * A request that broke off: stopped before any effect when it cannot have reached the upstream
 * (the connection failed before the request was sent), else with an effect that may have started.
 */
function lost(req: ExecutionRequest, err: unknown, when: string): ExecutionReport {
  const notSentYet = err instanceof PinnedFetchError && !err.sent;
  const aborted = req.signal.aborted;
  const code = aborted
    ? abortCode(req.signal)
    : notSentYet
      ? 'CONNECTION_FAILED'
      : 'CONNECTION_LOST';
  const why = aborted
    ? code === 'TIMEOUT'
      ? `the call timed out after ${req.timeoutMs} ms`
      : `the call was aborted (${code})`
    : `the connection failed: ${(err as Error).message}`;
  if (notSentYet && !aborted) return notSent(code, `${why}; the request was not sent`);
  return {
    status: 'stopped',
    code,
    message: `${why} ${when}`,
    effectMayHaveStarted: true,
    uncertainNote: 'after the request was sent; an effect may have happened',
  };
}
