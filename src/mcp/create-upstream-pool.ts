import { ErrorCode, GatehouseError } from '../core/index.js';
import type { McpServerRecord } from './mcp-server.js';
import type { McpServiceOptions, McpSettings } from './mcp-service-options.js';
import type { ConnectionCredentials } from './upstream/connection-options.js';
import { UpstreamPool } from './upstream/pool.js';
import type { UpstreamPoolOptions } from './upstream/pool.js';

/**
 * The MCP service's pool of upstream connections: credentials from the broker, stdio servers in
 * the sandbox launcher (unless registered without one), HTTP egress through `connectHttp`, and
 * the service's reactions to a changed list or a lost connection.
 */
export function createUpstreamPool(
  o: McpServiceOptions,
  s: McpSettings,
  on: Pick<UpstreamPoolOptions, 'onListChanged' | 'onLost' | 'onNotice' | 'onConnected'>,
): UpstreamPool {
  return new UpstreamPool({
    connectTimeoutMs: s.requestTimeoutMs,
    maxMessageBytes: s.maxMessageBytes,
    ...(o.maxMessageBytesSetting === undefined
      ? {}
      : { maxMessageBytesSetting: o.maxMessageBytesSetting }),
    baseBackoffMs: s.baseBackoffMs,
    maxBackoffMs: s.maxBackoffMs,
    now: () => o.clock.now(),
    ...on,
    credentials: (server) => credentialsFor(server, o),
    ...(o.connectHttp ? { connectHttp: o.connectHttp } : {}),
    launch: (server) =>
      server.transport.type === 'stdio' && server.sandboxed !== false
        ? o.stdioLauncher?.(server)
        : undefined,
  });
}

/** Issues the credentials a server declares for one connection; null when it declares none. */
async function credentialsFor(
  server: McpServerRecord,
  o: Pick<McpServiceOptions, 'issueCredentials'>,
): Promise<ConnectionCredentials | null> {
  const needs = server.transport.credentials ?? [];
  if (needs.length === 0) return null;
  if (!o.issueCredentials)
    throw new GatehouseError(
      ErrorCode.CREDENTIAL_UNAVAILABLE,
      `MCP server ${server.id} declares ${needs.length} credential(s) but this gateway has no credential broker.`,
    );
  return o.issueCredentials(server.tenant, server.id, needs);
}
