import { jsonValueProblem } from '../../core/index.js';
import type {
  ExecutionReport,
  ExecutionRequest,
  Executor,
  LeaseNeed,
} from '../../invocation/index.js';
import type { ToolDescriptor } from '../../tools/index.js';
import type { CallToolResult } from '@modelcontextprotocol/client';
import { boundOutput } from './bound-output.js';
import { spoolAnswer } from './spool-answer.js';
import { cutNote } from '../../invocation/index.js';
import { DEFAULT_FORWARDING, forwardRequests } from './forwarded-requests.js';
import type { ForwardingBounds } from './forwarded-requests.js';
import { mcpExecution } from '../../mcp/index.js';
import type { McpService, UpstreamCallOutcome } from '../../mcp/index.js';

/** Options of the {@link McpExecutor}. */
export interface McpExecutorOptions {
  mcp: McpService;
  /**
   * Largest output kept, in bytes of JSON; longer text is cut, the output says so, and the whole
   * answer (redacted) is kept as an artifact.
   */
  maxOutputBytes?: number;
  /** Bounds of the sampling and elicitation requests an upstream sends a call's caller. */
  forwarding?: Partial<ForwardingBounds>;
}

/**
 * Runs tools of kind `mcp` on their upstream server: only a bound tool of an active server, with
 * the digest the maintainer approved. The call has the request's timeout and is cancelled
 * upstream on abort. The upstream's sampling and elicitation requests while it serves the call go
 * to the call's caller, bounded and recorded (see {@link forwardRequests}). A tool error result is the tool's answer (`observed`); a call that was sent
 * and got no answer is `uncertain` unless its class is read.
 */
export class McpExecutor implements Executor {
  private readonly mcp: McpService;
  private readonly maxOutputBytes: number;
  private readonly forwarding: ForwardingBounds;
  readonly lease: LeaseNeed = {
    kind: 'none',
    why: 'MCP tools run in their upstream server, not in a per-call sandbox',
  };

  constructor(options: McpExecutorOptions) {
    this.mcp = options.mcp;
    this.maxOutputBytes = options.maxOutputBytes ?? 1024 * 1024;
    this.forwarding = { ...DEFAULT_FORWARDING, ...options.forwarding };
  }

  check(descriptor: ToolDescriptor): string | null {
    return mcpExecution(descriptor)
      ? null
      : 'an mcp descriptor needs execution {server, tool} (non-empty strings)';
  }

  async execute(req: ExecutionRequest): Promise<ExecutionReport> {
    const exec = mcpExecution(req.descriptor);
    if (!exec) return notSent('INVALID_DESCRIPTOR', this.check(req.descriptor)!);
    if (typeof req.input !== 'object' || req.input === null || Array.isArray(req.input))
      return notSent('INVALID_INPUT', 'MCP tool arguments must be a JSON object');
    const ready = await this.mcp.readyToCall(req.tenant, exec.server, exec.tool, req.descriptor);
    if (!ready.ok) return notSent(ready.code, ready.message);
    // The connection's credentials join the call's sanitizer (never stored).
    const secrets = ready.conn.secrets;
    if (secrets.length > 0) req.redactAlso(secrets, ready.conn.redactor);
    const outcome = await ready.conn.callTool(exec.tool, req.input as Record<string, unknown>, {
      timeoutMs: req.timeoutMs,
      signal: req.signal,
      ...(req.caller?.progress ? { onProgress: req.caller.progress } : {}),
      onRequest: forwardRequests(req, this.forwarding),
    });
    return this.report(outcome, req);
  }

  private async report(
    outcome: UpstreamCallOutcome,
    req: ExecutionRequest,
  ): Promise<ExecutionReport> {
    switch (outcome.kind) {
      case 'result': {
        // The upstream's JSON, parsed by the SDK: what canonical JSON cannot hold (a number that
        // overflowed to Infinity, nesting past the bound) cannot be recorded or digested.
        const problem = jsonValueProblem(outcome.result);
        if (!problem) return { status: 'observed', ...(await this.output(outcome.result, req)) };
        return {
          status: 'stopped',
          code: 'UPSTREAM_INVALID_ANSWER',
          message: `the upstream answered, but its answer cannot be kept as JSON at ${problem.pointer || 'its top'}: ${problem.reason}`,
          effectMayHaveStarted: true,
          uncertainNote: 'whether the tool acted is unknown',
        };
      }
      case 'not-sent':
      case 'refused':
        return notSent(outcome.code, outcome.message);
      case 'no-answer':
        return {
          status: 'stopped',
          code: outcome.code,
          message: outcome.message,
          effectMayHaveStarted: true,
          uncertainNote: 'the request was sent, so the tool may have acted',
        };
    }
  }

  /**
   * The result's content (and structured content), bounded; a tool error says it is one. An
   * answer over the bound is cut and, like a shell tool's stdout, kept whole as an artifact
   * (redacted as it is spooled) that the cut output names; the whole is reported as `full`, for the
   * digest of the full output.
   */
  private async output(
    r: CallToolResult,
    req: ExecutionRequest,
  ): Promise<{ output: unknown; full?: unknown }> {
    const out: Record<string, unknown> = {};
    if (r.isError === true) {
      out.isError = true;
      out.note = 'The upstream tool reported an error; this is its answer.';
    }
    out.content = r.content;
    if (r.structuredContent !== undefined) out.structuredContent = r.structuredContent;
    const bytes = Buffer.byteLength(JSON.stringify(out));
    if (bytes <= this.maxOutputBytes) return { output: out };
    // Redacted once, before it is cut (a secret cut in half would stay) or spooled: the capture's
    // own pass then finds only what hides in the JSON text, so no removal is counted twice.
    const shown = req.redact(out);
    const whole = await spoolAnswer(JSON.stringify(shown), req.capture());
    // Redaction shrank it to what the capture holds in memory: the sanitize stage bounds it.
    if (!whole.truncated) return { output: shown, full: out };
    const cut = boundOutput(shown, this.maxOutputBytes, bytes);
    const truncated = { ...(cut.truncated as object), ...cutNote(whole) };
    return { output: { ...cut, truncated }, full: out };
  }
}

/** A call the upstream never acted on (not sent, or refused): nothing took effect. */
function notSent(code: string, message: string): ExecutionReport {
  return { status: 'stopped', code, message, effectMayHaveStarted: false };
}
