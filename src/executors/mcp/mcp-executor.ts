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
import { DEFAULT_FORWARDING, forwardRequests } from './forwarded-requests.js';
import type { ForwardingBounds } from './forwarded-requests.js';
import { mcpExecution } from '../../mcp/index.js';
import type { McpService, UpstreamCallOutcome } from '../../mcp/index.js';

/** Options of the {@link McpExecutor}. */
export interface McpExecutorOptions {
  mcp: McpService;
  /** Largest output kept, in bytes of JSON; longer text is cut and the output says so. */
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
    return this.report(outcome);
  }

  private report(outcome: UpstreamCallOutcome): ExecutionReport {
    switch (outcome.kind) {
      case 'result': {
        // The upstream's JSON, parsed by the SDK: what canonical JSON cannot hold (a number that
        // overflowed to Infinity, nesting past the bound) cannot be recorded or digested.
        const problem = jsonValueProblem(outcome.result);
        if (!problem) return { status: 'observed', ...this.output(outcome.result) };
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
   * The result's content (and structured content), bounded; a tool error says it is one. When the
   * bound cut it, the whole is reported as `full`, for the digest of the full output.
   */
  private output(r: CallToolResult): { output: unknown; full?: unknown } {
    const out: Record<string, unknown> = {};
    if (r.isError === true) {
      out.isError = true;
      out.note = 'The upstream tool reported an error; this is its answer.';
    }
    out.content = r.content;
    if (r.structuredContent !== undefined) out.structuredContent = r.structuredContent;
    const bounded = boundOutput(out, this.maxOutputBytes);
    return bounded === out ? { output: out } : { output: bounded, full: out };
  }
}

/** A call the upstream never acted on (not sent, or refused): nothing took effect. */
function notSent(code: string, message: string): ExecutionReport {
  return { status: 'stopped', code, message, effectMayHaveStarted: false };
}
