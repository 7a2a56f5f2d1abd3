import type { Discovery, McpBinding, McpServerRecord } from '../../mcp/index.js';
import type { Tables } from '../schema/tables.js';

/** The row of a new MCP server. */
export function mcpServerRow(s: McpServerRecord): Tables['mcp_servers'] {
  return {
    id: s.id,
    tenant: s.tenant,
    name: s.name,
    identity: s.identity,
    state: s.state,
    version: s.version,
    record: JSON.stringify(s),
    created_at: s.createdAt,
    updated_at: s.updatedAt,
  };
}

/** The columns an MCP server's compare-and-set update changes. */
export function mcpServerChanges(
  s: McpServerRecord,
): Pick<Tables['mcp_servers'], 'name' | 'state' | 'version' | 'record' | 'updated_at'> {
  return {
    name: s.name,
    state: s.state,
    version: s.version,
    record: JSON.stringify(s),
    updated_at: s.updatedAt,
  };
}

/** The row of a server's latest discovery. */
export function discoveryRow(
  serverId: string,
  tenant: string,
  d: Discovery,
): Tables['mcp_discoveries'] {
  return { server_id: serverId, tenant, record: JSON.stringify(d), discovered_at: d.at };
}

/** The row of a tool binding of a server. */
export function bindingRow(
  serverId: string,
  tenant: string,
  b: McpBinding,
): Tables['mcp_bindings'] {
  return {
    server_id: serverId,
    tool: b.tool,
    tenant,
    state: b.state,
    record: JSON.stringify(b),
    updated_at: b.at,
  };
}
