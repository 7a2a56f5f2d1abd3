/** The shapes of the MCP server routes the Studio reads (a copy; test/studio checks it). */

/** How the gateway reaches an upstream server. */
export type McpTransport =
  | { type: 'stdio'; command: string; args: string[]; env?: Record<string, string> }
  | { type: 'http'; url: string };

/** A registered upstream MCP server. */
export interface McpServer {
  id: string;
  name: string;
  transport: McpTransport;
  identity: string;
  state: 'registered' | 'verified' | 'active' | 'degraded' | 'retired';
  sandboxed?: boolean;
  stateReason: string | null;
  registeredBy: string;
  createdAt: string;
  updatedAt: string;
}

/** The fields of an upstream tool its digest covers. */
export interface UpstreamTool {
  name: string;
  title?: string;
  description?: string;
  inputSchema: Record<string, unknown>;
  outputSchema?: Record<string, unknown>;
  annotations?: Record<string, unknown>;
}

/** One changed field of a tool, old and new. */
export interface ToolFieldChange {
  field: string;
  old: unknown;
  new: unknown;
}

/** A maintainer's binding of one discovered tool to a descriptor. */
export interface McpBinding {
  serverId: string;
  tool: string;
  digest: string;
  approved: UpstreamTool;
  descriptor: { id: string; version: string };
  class: string;
  state: 'bound' | 'unbound';
  change: { digest: string; changes: ToolFieldChange[]; at: string } | null;
  boundBy: string;
  at: string;
}

/** `GET /v1/mcp-servers/:id`: the server, what discovery found, its bindings. */
export interface McpServerView {
  server: McpServer;
  discovery: {
    tools: { tool: UpstreamTool; digest: string }[];
    resources: { uri: string; name: string }[];
    prompts: { name: string; description?: string }[];
    at: string;
  } | null;
  bindings: McpBinding[];
}

/** The events that change what the MCP views show. */
export const MCP_EVENTS = [
  'McpServerStateChanged',
  'McpToolUnbound',
  'DescriptorActivated',
  'DescriptorRetired',
];

/** One tool version of `GET /v1/tools`. */
export interface ToolVersion {
  id: string;
  version: string;
  kind: string;
  class: string;
  state: 'active' | 'deprecated' | 'revoked';
  stateReason: string | null;
  digest: string;
  publishedAt: string;
}

/** One agent release of `GET /v1/agent-releases`. */
export interface AgentReleaseView {
  agentId: string;
  version: string;
  closure: { id: string; version: string }[];
  policy: { maxClass: string };
  digest: string;
  publishedAt: string;
}
