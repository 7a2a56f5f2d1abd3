import { ErrorCode, GatehouseError } from '../core/index.js';
import type { McpBinding } from './mcp-binding.js';
import type { McpStore } from './mcp-store.js';
import type { McpSettings } from './mcp-service-options.js';
import type { UpstreamConnection } from './upstream/connection.js';
import type { UpstreamPool } from './upstream/pool.js';
import { checkCall } from './call-check.js';
import type { CallRefusal } from './call-check.js';
import { describeError } from './upstream/call-outcome.js';
import { credentialCode } from './credential-code.js';
import type { ServerLifecycle } from './server-lifecycle.js';
import { UpstreamView } from './upstream-view.js';

/** Why a call cannot go upstream, or the connection and binding it goes through. */
export type CallReadiness =
  { ok: true; conn: UpstreamConnection; binding: McpBinding } | CallRefusal;

/** Collaborators (shared with the MCP service) and settings of the {@link UpstreamCalls}. */
interface UpstreamCallsOptions {
  store: McpStore;
  pool: UpstreamPool;
  lifecycle: Pick<ServerLifecycle, 'server'>;
  /** Runs discovery again now, under the server's lock (`McpService.rediscover`). */
  rediscover: (tenant: string, id: string) => Promise<unknown>;
  settings: Pick<McpSettings, 'requestTimeoutMs'>;
}

/**
 * The call side of upstream servers: whether a tool call may go upstream and through which
 * connection, and read-only requests (resources, prompts) through the pooled connections.
 */
export class UpstreamCalls {
  constructor(private readonly options: UpstreamCallsOptions) {}

  /** See `McpService.readyToCall`; a new connection is rediscovered and the call checked again. */
  async readyToCall(
    tenant: string,
    serverId: string,
    tool: string,
    descriptor: { id: string; version: string },
  ): Promise<CallReadiness> {
    const first = await checkCall(this.options.store, tenant, serverId, tool, descriptor);
    if (!first.ok) return first;
    const server = first.server;
    let pooled;
    try {
      pooled = await this.options.pool.get(server);
    } catch (err) {
      return {
        ok: false,
        code: credentialCode(err) ?? 'SERVER_UNAVAILABLE',
        message: `MCP server ${serverId} cannot be reached: ${describeError(err)}`,
      };
    }
    if (!pooled.fresh) return { ok: true, conn: pooled.conn, binding: first.binding };
    // A new connection: the tools may have changed while it was down; discover before calling.
    try {
      await this.options.rediscover(tenant, serverId);
    } catch (err) {
      return {
        ok: false,
        code: 'SERVER_UNAVAILABLE',
        message: `MCP server ${serverId} reconnected but discovery failed: ${describeError(err)}`,
      };
    }
    const again = await checkCall(this.options.store, tenant, serverId, tool, descriptor);
    if (!again.ok) return again;
    const conn = this.options.pool.peek(serverId);
    if (!conn)
      return {
        ok: false,
        code: 'SERVER_UNAVAILABLE',
        message: `MCP server ${serverId} disconnected`,
      };
    return { ok: true, conn, binding: again.binding };
  }

  /** See `McpService.view`: one tenant's stored state, read once for many checks. */
  view(tenant: string): UpstreamView {
    return new UpstreamView({
      store: this.options.store,
      tenant,
      unreachable: (id) => this.options.pool.unreachable(id),
    });
  }

  /** Runs a read-only request on an active server. @throws as `McpService.readUpstream`. */
  async readUpstream<T>(
    tenant: string,
    serverId: string,
    op: (conn: UpstreamConnection, timeoutMs: number) => Promise<T>,
  ): Promise<T> {
    const server = await this.options.lifecycle.server(tenant, serverId);
    if (server.state !== 'active')
      throw new GatehouseError(
        ErrorCode.UNAVAILABLE,
        `MCP server ${serverId} is ${server.state}, not active.`,
      );
    let conn: UpstreamConnection;
    try {
      conn = (await this.options.pool.get(server)).conn;
    } catch (err) {
      throw new GatehouseError(
        ErrorCode.UNAVAILABLE,
        `MCP server ${serverId} cannot be reached: ${describeError(err)}`,
        { cause: err },
      );
    }
    try {
      return await op(conn, this.options.settings.requestTimeoutMs);
    } catch (err) {
      const code = (err as { code?: unknown }).code;
      // The upstream's own words, which may quote the credentials it was given.
      const message = conn.redactor.redactText(describeError(err)).text;
      // -32602 invalid params, -32002 resource not found: the request's fault, not the server's.
      if (code === -32602 || code === -32002)
        throw new GatehouseError(
          ErrorCode.INVALID_INPUT,
          `MCP server ${server.name} refused: ${message}`,
        );
      throw new GatehouseError(
        ErrorCode.UNAVAILABLE,
        `MCP server ${server.name} failed to answer: ${message}`,
        { cause: err },
      );
    }
  }
}
