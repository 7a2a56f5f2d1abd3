import { ProtocolError, ProtocolErrorCode, Server } from '@modelcontextprotocol/server';
import type { CallToolResult, ServerContext, Tool } from '@modelcontextprotocol/server';
import { ErrorCode, GatehouseError, requestHash } from '../../core/index.js';
import type { FastifyBaseLogger } from 'fastify';
import type { Principal } from '../../tenancy/index.js';
import { derivedKey } from './call-key.js';
import { McpToolNames } from './names.js';
import type { ToolRef } from './names.js';
import { toProtocolError } from './errors.js';
import { RefusalType, boundedText, recordRefusal, sessionDigest } from './refusals.js';
import { MetaKey, recordResult, refusalResult } from './results.js';
import { registerPassThrough } from './upstreams.js';
import type { LiveSession, LiveSessions } from './live-sessions.js';
import { addScreenshots } from './screenshot-blocks.js';
import { IDEMPOTENCY_KEY } from '../request-parsing.js';
import type { GatewayServices } from '../services.js';
import { callerSpanContext } from '../trace-context.js';
import { CallerRefusal } from '../../invocation/index.js';
import type { CallerChannel, InvocationTelemetry } from '../../invocation/index.js';

/** Options of {@link createSessionServer}. */
interface SessionServerOptions {
  services: GatewayServices;
  /** The agent the session is bound to (checked to be one by the endpoint). */
  principal: Principal;
  /** The session's id, known once the transport has made it. */
  sessionId: () => string | undefined;
  version: string;
  /** Where refusals are logged. */
  log: FastifyBaseLogger;
  /** This node's open sessions: for subscriptions and log levels. */
  live: LiveSessions;
}

/** A session's MCP server, and the session as notifications see it (add it once it opens). */
export interface SessionServer {
  server: Server;
  live: LiveSession;
}

/**
 * The MCP server of one agent's session: `tools/list` shows the active, healthy tools of the
 * agent's release closure; `tools/call` runs the governed pipeline as that agent; resources and
 * prompts of the upstream servers the closure reaches are passed through read-only.
 */
export function createSessionServer(options: SessionServerOptions): SessionServer {
  const s = options.services;
  const p = options.principal;
  const server = new Server(
    { name: 'gatehouse', version: options.version },
    {
      capabilities: {
        tools: { listChanged: true },
        ...(s.mcp
          ? { resources: { subscribe: true }, prompts: {}, completions: {}, logging: {} }
          : {}),
      },
      instructions:
        'Governed tools of Gatehouse. Pass _meta "gatehouse/environment" (default dev) and "gatehouse/idempotencyKey" (else only a retry of the same JSON-RPC request, same session and id, is answered from its record; any other call runs anew); after an approval, repeat the call with _meta "gatehouse/approvalId".',
    },
  );
  const release = () => s.registry.agentRelease(p.tenant, p.agent!.id, p.agent!.version)?.release;
  const closure = () => release()?.closure ?? [];
  let names: McpToolNames | undefined;
  // The closure of an agent release never changes, nor do its versions' descriptors: nor its names.
  const namesOf = () =>
    (names ??= new McpToolNames(
      release()?.mcp?.toolNames === 'upstream'
        ? withUpstreamNames(s, p.tenant, closure())
        : closure(),
    ));

  const visibleTools = async (): Promise<Tool[]> => {
    const healthy = s.healthy?.(p.tenant) ?? (() => true);
    const tools: Tool[] = [];
    for (const ref of closure()) {
      const stored = s.registry.tool(p.tenant, ref.id, ref.version)?.stored;
      if (!stored || stored.state === 'revoked' || !(await healthy(stored))) continue;
      const d = stored.descriptor;
      // MCP arguments are an object; a tool whose input is not one cannot be offered.
      if (d.inputSchema.type !== 'object') continue;
      tools.push({
        name: namesOf().nameOf(ref),
        ...(d.title ? { title: d.title } : {}),
        description: d.description,
        inputSchema: d.inputSchema as Tool['inputSchema'],
        // An upstream's output schema is its promise about structuredContent, which calls pass
        // through as it answered; other kinds' outputs are not checked against theirs.
        ...(d.kind === 'mcp' && d.outputSchema?.type === 'object'
          ? { outputSchema: d.outputSchema }
          : {}),
        annotations: { readOnlyHint: d.sideEffect.class === 'read' },
        _meta: {
          'gatehouse/tool': { id: d.id, version: d.version, class: d.sideEffect.class },
          'gatehouse/state': stored.state,
        },
      });
    }
    return tools;
  };

  server.setRequestHandler('tools/list', async () => {
    try {
      return { tools: await visibleTools() };
    } catch (err) {
      throw toProtocolError(err);
    }
  });

  server.setRequestHandler('tools/call', async (request, ctx) => {
    const { name, arguments: args, _meta } = request.params;
    const ref = namesOf().refOf(name);
    if (!ref) {
      // The agent's text, bounded and without known secret patterns, for the record and the log.
      const shown = boundedText(name);
      const id = options.sessionId();
      await recordRefusal(s, options.log, p, RefusalType.tool, {
        code: ErrorCode.INVALID_INPUT,
        reason: 'not-in-closure',
        message: `Unknown tool: ${shown} is not a tool of this agent's release.`,
        data: { name: shown, ...(id ? { sessionSha256: sessionDigest(id) } : {}) },
      });
      throw new ProtocolError(
        ProtocolErrorCode.InvalidParams,
        `Unknown tool: ${shown} is not a tool of this agent's release (see tools/list).`,
      );
    }
    const meta = (_meta ?? {}) as Record<string, unknown>;
    const extra: Record<string, unknown> = {};
    try {
      const environment = environmentOf(s, p, meta[MetaKey.environment]);
      const input = args ?? {};
      const approvalId = meta[MetaKey.approvalId];
      if (approvalId !== undefined && typeof approvalId !== 'string')
        throw invalid(`_meta "${MetaKey.approvalId}" must be a string (the approval's id).`);
      let key = meta[MetaKey.idempotencyKey];
      if (key === undefined) {
        key = await derivedKey(s, p, approvalId, {
          sessionId: ctx.sessionId ?? options.sessionId(),
          requestId: ctx.mcpReq.id,
          hash: requestHash({
            tenant: p.tenant,
            project: p.project!,
            environment,
            agent: p.agent!,
            tool: ref,
            input,
          }),
        });
        extra[MetaKey.idempotencyKeyDerived] = true;
      } else if (typeof key !== 'string' || !IDEMPOTENCY_KEY.test(key)) {
        throw invalid(
          `_meta "${MetaKey.idempotencyKey}" must be 1–255 printable ASCII characters without spaces.`,
        );
      }
      extra[MetaKey.idempotencyKey] = key;
      const record = await s.invocations.invoke(p, {
        tool: ref,
        input,
        environment,
        idempotencyKey: key as string,
        ...(approvalId !== undefined ? { approvalId } : {}),
        telemetry: {
          ...telemetryOf(options.log, meta),
          caller: callerOf(server, meta, ctx.mcpReq),
        },
      });
      const result = recordResult(record, extra);
      if (s.artifacts) await addScreenshots(result, record, s.registry, s.artifacts);
      return project(server, result);
    } catch (err) {
      if (err instanceof GatehouseError) return project(server, refusalResult(err, extra));
      throw toProtocolError(err);
    }
  });
  const live: LiveSession = {
    tenant: p.tenant,
    tools: async () => JSON.stringify(await visibleTools()),
    reaches: () => Promise.resolve(false),
    notify: (method, params) => server.notification({ method, params }),
    level: null,
    subscribed: new Set(),
  };
  if (s.mcp) {
    const reach = registerPassThrough(server, {
      services: { ...s, mcp: s.mcp },
      principal: p,
      closure,
      keepNames: release()?.mcp?.toolNames === 'upstream',
      live,
      sessions: options.live,
    });
    live.reaches = reach;
  }
  return { server, live };
}

/**
 * The call's log and, when `_meta` carries W3C Trace Context (`traceparent`, `tracestate`, as
 * MCP clients propagate it), the caller's span as the invocation span's parent.
 */
function telemetryOf(log: FastifyBaseLogger, meta: Record<string, unknown>): InvocationTelemetry {
  const parent = callerSpanContext(meta);
  return parent ? { log: log.child({ traceId: parent.traceId }), parent } : { log };
}

/**
 * The caller's channel of one `tools/call`: the tool's progress is sent on the request's own
 * stream under the `progressToken` of `_meta` (when there is one), and an upstream's sampling and
 * elicitation requests go to the agent as requests related to the call (on the same stream), when
 * its client declared the capability.
 */
function callerOf(server: Server, meta: Record<string, unknown>, req: CallRequest): CallerChannel {
  const token = meta.progressToken;
  return {
    ...(typeof token === 'string' || typeof token === 'number'
      ? {
          progress: (p) =>
            void req
              .notify({
                method: 'notifications/progress',
                params: { progressToken: token, ...p },
              })
              .catch(() => undefined),
        }
      : {}),
    ask: async ({ method, params }, { signal, timeoutMs }) => {
      const caps = server.getClientCapabilities();
      const options = { signal, timeout: timeoutMs, maxTotalTimeout: timeoutMs };
      if (method === 'sampling/createMessage') {
        if (!caps?.sampling)
          throw new CallerRefusal(
            "The agent's MCP client did not declare the sampling capability, so Gatehouse cannot forward sampling/createMessage to it.",
          );
        return req.send({ method, params }, options);
      }
      if (method === 'elicitation/create') {
        const mode = params.mode === 'url' ? 'url' : 'form';
        const declared = caps?.elicitation;
        const can =
          declared !== undefined &&
          (mode === 'form'
            ? declared.form !== undefined || declared.url === undefined
            : declared.url !== undefined);
        if (!can)
          throw new CallerRefusal(
            `The agent's MCP client did not declare ${mode} elicitation, so Gatehouse cannot forward elicitation/create to it.`,
          );
        return req.send({ method, params }, options);
      }
      throw new CallerRefusal(`Gatehouse does not forward ${method} to agents.`);
    },
  };
}

/** What a `tools/call` handler may send its agent: requests and notifications of the call. */
type CallRequest = Pick<ServerContext['mcpReq'], 'notify' | 'send'>;

/** The closure with each `mcp` tool's upstream name, for a release that keeps them. */
function withUpstreamNames(
  s: GatewayServices,
  tenant: string,
  closure: readonly ToolRef[],
): ToolRef[] {
  return closure.map((ref) => {
    const d = s.registry.tool(tenant, ref.id, ref.version)?.stored.descriptor;
    const upstream = d?.kind === 'mcp' ? (d.execution as { tool?: unknown }).tool : undefined;
    return typeof upstream === 'string' ? { ...ref, upstreamName: upstream } : ref;
  });
}

function project(server: Server, result: CallToolResult): CallToolResult {
  return server.projectCallToolResult(result, undefined);
}

function invalid(message: string): GatehouseError {
  return new GatehouseError(ErrorCode.INVALID_INPUT, message);
}

/**
 * The environment a call names in `_meta`, else `dev` when the agent's project has one.
 * @throws GatehouseError INVALID_INPUT when neither is there.
 */
function environmentOf(s: GatewayServices, p: Principal, given: unknown): string {
  if (typeof given === 'string' && given.length > 0) return given;
  if (given !== undefined)
    throw invalid(`_meta "${MetaKey.environment}" must be a non-empty string.`);
  const names = s.directory.environmentsOf(p.tenant, p.project!).map((e) => e.name);
  if (names.includes('dev')) return 'dev';
  throw invalid(
    `Name the environment in _meta "${MetaKey.environment}" (one of ${names.join(', ') || 'none'}).`,
  );
}
