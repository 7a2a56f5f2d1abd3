import type { FastifyBaseLogger } from 'fastify';
import { cutText, isoTime, sha256Hex } from '../../core/index.js';
import { patternRedactor } from '../../secrets/index.js';
import type { Principal } from '../../tenancy/index.js';
import type { GatewayServices } from '../services.js';

/** Record types of refusals at the MCP edge. */
export const RefusalType = {
  /** A request refused before any JSON-RPC message ran (size, session). */
  request: 'mcp.request.refused',
  /** tools/call of a name that is not a tool of the agent's release. */
  tool: 'mcp.tool.refused',
} as const;
export type RefusalType = (typeof RefusalType)[keyof typeof RefusalType];

/** One refusal at the MCP edge. */
interface EdgeRefusal {
  code: string;
  /** A stable word for dashboards and tests, e.g. `foreign-session`, `body-too-large`. */
  reason: string;
  message: string;
  /** What else identifies the attempt (never a secret: session ids only as digests). */
  data?: Record<string, unknown>;
}

/**
 * Records a refusal at the MCP edge: always a metric (`gatehouse_mcp_refusals_total`) and a
 * warning in the request log; and, when the caller is an authenticated agent, an audit record in
 * its tenant's log (a forged Host or a bad token names no tenant, so it is not in any tenant's
 * log). Never throws: a refusal must not turn into a failure because recording it failed.
 */
export async function recordRefusal(
  s: GatewayServices,
  log: FastifyBaseLogger,
  principal: Principal | undefined,
  type: RefusalType,
  r: EdgeRefusal,
): Promise<void> {
  s.metrics.mcpRefused(r.code);
  log.warn({ code: r.code, reason: r.reason, principal: principal?.id }, r.message);
  if (!principal) return;
  try {
    await s.auditWriter.append([
      {
        tenant: principal.tenant,
        type,
        subject: `principal/${principal.id}`,
        at: isoTime(s.auditWriter.clock.now()),
        actor: principal.id,
        data: { code: r.code, reason: r.reason, message: r.message, ...r.data },
      },
    ]);
  } catch (err) {
    log.error({ err }, 'could not record a refusal at /mcp');
  }
}

/** Text an agent sent, as it may be recorded: known secret patterns removed, cut to 256 characters. */
export function boundedText(text: string): string {
  return cutText(patternRedactor().redactText(text).text, 256);
}

/** A session id as it may be recorded: its SHA-256, since the id itself lets one use the session. */
export function sessionDigest(id: string): string {
  return sha256Hex(id);
}
