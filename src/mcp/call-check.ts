import type { Discovery, McpBinding } from './mcp-binding.js';
import type { McpServerRecord } from './mcp-server.js';
import type { McpStore } from './mcp-store.js';

/** Why a call may not go upstream. */
export interface CallRefusal {
  ok: false;
  code: string;
  message: string;
}

/** A call's server and binding when it may go upstream, or why it may not. */
export type CallCheck = { ok: true; server: McpServerRecord; binding: McpBinding } | CallRefusal;

/** Where a check finds a server's binding of a tool and its last discovery. */
export interface CallCheckSource {
  binding: (tool: string) => Promise<McpBinding | undefined>;
  discovery: () => Promise<Discovery | undefined>;
}

/**
 * Whether a call of `descriptor` may go upstream: the server active (degraded fails fast), the tool
 * bound to exactly this descriptor version, and listed upstream with the approved digest. Asks
 * `from` only as far as the first refusal.
 */
export async function checkServerCall(
  serverId: string,
  server: McpServerRecord | undefined,
  tool: string,
  descriptor: { id: string; version: string },
  from: CallCheckSource,
): Promise<CallCheck> {
  const down = serverRefusal(serverId, server);
  if (down) return down;
  const binding = await from.binding(tool);
  const unbound = bindingRefusal(serverId, tool, descriptor, binding);
  if (unbound) return unbound;
  const gone = listingRefusal(serverId, tool, binding!, await from.discovery());
  if (gone) return gone;
  return { ok: true, server: server!, binding: binding! };
}

/** {@link checkServerCall} on the store: at most the server, the binding and the discovery read. */
export async function checkCall(
  store: McpStore,
  tenant: string,
  serverId: string,
  tool: string,
  descriptor: { id: string; version: string },
): Promise<CallCheck> {
  return checkServerCall(serverId, await store.get(tenant, serverId), tool, descriptor, {
    binding: (t) => store.binding(tenant, serverId, t),
    discovery: () => store.discovery(tenant, serverId),
  });
}

/** Why no call may go to this server now (missing, degraded, not active), or null. */
function serverRefusal(serverId: string, server: McpServerRecord | undefined): CallRefusal | null {
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
  return null;
}

/** Why the tool's binding does not let `descriptor` be called (none, another, unbound), or null. */
function bindingRefusal(
  serverId: string,
  tool: string,
  descriptor: { id: string; version: string },
  binding: McpBinding | undefined,
): CallRefusal | null {
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
  return null;
}

/** Why the server's last discovery does not list the bound tool with its approved digest, or null. */
function listingRefusal(
  serverId: string,
  tool: string,
  binding: McpBinding,
  discovery: Discovery | undefined,
): CallRefusal | null {
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
  return null;
}
