import type { McpBinding } from './mcp-binding.js';
import type { McpServerRecord } from './mcp-server.js';
import type { McpStore } from './mcp-store.js';

/** A call's server and binding when it may go upstream, or why it may not. */
type CallCheck =
  | { ok: true; server: McpServerRecord; binding: McpBinding }
  | { ok: false; code: string; message: string };

/**
 * Whether a call of `descriptor` may go upstream: the server active (degraded fails fast), the tool
 * bound to exactly this descriptor version, and listed upstream with the approved digest.
 */
export async function checkCall(
  store: McpStore,
  tenant: string,
  serverId: string,
  tool: string,
  descriptor: { id: string; version: string },
): Promise<CallCheck> {
  const server = await store.get(tenant, serverId);
  if (!server)
    return {
      ok: false,
      code: 'SERVER_NOT_FOUND',
      message: `MCP server ${serverId} does not exist.`,
    };
  if (server.state === 'degraded') {
    return {
      ok: false,
      code: 'SERVER_DEGRADED',
      message: `MCP server ${serverId} is degraded (${server.stateReason ?? 'failing health probes'}); calls fail fast until it recovers.`,
    };
  }
  if (server.state !== 'active')
    return {
      ok: false,
      code: 'SERVER_NOT_ACTIVE',
      message: `MCP server ${serverId} is ${server.state}, not active.`,
    };
  const binding = await store.binding(tenant, serverId, tool);
  if (!binding)
    return {
      ok: false,
      code: 'TOOL_NOT_BOUND',
      message: `Tool ${tool} of MCP server ${serverId} is not bound.`,
    };
  if (
    binding.descriptor.id !== descriptor.id ||
    binding.descriptor.version !== descriptor.version
  ) {
    return {
      ok: false,
      code: 'BINDING_MISMATCH',
      message: `Tool ${tool} of MCP server ${serverId} is bound to ${binding.descriptor.id}@${binding.descriptor.version}, not ${descriptor.id}@${descriptor.version}.`,
    };
  }
  if (binding.state !== 'bound') {
    const fields = binding.change?.changes.map((c) => c.field).join(', ') ?? 'its definition';
    return {
      ok: false,
      code: 'TOOL_UNBOUND',
      message: `Tool ${tool} of MCP server ${serverId} changed upstream (${fields}); it refuses calls until a maintainer re-approves it.`,
    };
  }
  const discovery = await store.discovery(tenant, serverId);
  const listed = discovery?.tools.find((t) => t.tool.name === tool);
  if (!listed)
    return {
      ok: false,
      code: 'TOOL_GONE',
      message: `MCP server ${serverId} no longer lists tool ${tool}.`,
    };
  if (listed.digest !== binding.digest)
    return {
      ok: false,
      code: 'TOOL_UNBOUND',
      message: `Tool ${tool} of MCP server ${serverId} changed upstream.`,
    };
  return { ok: true, server, binding };
}
