import type { ToolDescriptor } from '../tools/index.js';
import type { Discovery, McpBinding } from './mcp-binding.js';
import { mcpExecution } from './mcp-descriptor.js';
import type { McpServerRecord } from './mcp-server.js';
import type { McpStore } from './mcp-store.js';
import { checkServerCall } from './call-check.js';
import type { CallCheck } from './call-check.js';

/** Collaborators of an {@link UpstreamView}. */
interface UpstreamViewOptions {
  store: McpStore;
  tenant: string;
  /** Whether the pool's last attempt to reach the server failed (see `McpService.isCallable`). */
  unreachable: (serverId: string) => boolean;
}

/** What one server's tools are checked against: its bindings by tool and its last discovery. */
interface ServerTools {
  bindings: Map<string, McpBinding>;
  discovery: Discovery | undefined;
}

/**
 * The stored state of one tenant's upstream servers, for one request that asks about many tools
 * (the MCP endpoint's `tools/list`, and the servers its resources and prompts reach). It reads the
 * tenant's servers once, and an active server's bindings and discovery once each, the first time a
 * tool of that server is asked about: the reads grow with the servers asked about, never with the
 * tools. Each answer is the one `checkCall` would give on the state as read. Made per
 * request and then dropped, so it is never older than the request.
 */
export class UpstreamView {
  private list: Promise<McpServerRecord[]> | undefined;
  private byId: Promise<Map<string, McpServerRecord>> | undefined;
  private readonly tools = new Map<string, Promise<ServerTools>>();

  constructor(private readonly options: UpstreamViewOptions) {}

  /** The tenant's servers, oldest first (one read, on first use). */
  servers(): Promise<McpServerRecord[]> {
    return (this.list ??= this.options.store.list(this.options.tenant));
  }

  /** As `McpService.isBound`, from this view. */
  async isBound(
    serverId: string,
    tool: string,
    descriptor: { id: string; version: string },
  ): Promise<boolean> {
    return (await this.check(serverId, tool, descriptor)).ok;
  }

  /** As `McpService.isCallable`, from this view (the pool's memory is asked now). */
  async isCallable(
    serverId: string,
    tool: string,
    descriptor: { id: string; version: string },
  ): Promise<boolean> {
    if (this.options.unreachable(serverId)) return false;
    return this.isBound(serverId, tool, descriptor);
  }

  /** {@link isCallable} for a descriptor of kind `mcp`; false for any other descriptor. */
  async descriptorCallable(descriptor: ToolDescriptor): Promise<boolean> {
    const exec = descriptor.kind === 'mcp' ? mcpExecution(descriptor) : null;
    return exec !== null && this.isCallable(exec.server, exec.tool, descriptor);
  }

  /** As `checkCall`, from this view. */
  async check(
    serverId: string,
    tool: string,
    descriptor: { id: string; version: string },
  ): Promise<CallCheck> {
    const server = (await (this.byId ??= this.servers().then(byId))).get(serverId);
    return checkServerCall(serverId, server, tool, descriptor, {
      binding: async (t) => (await this.toolsOf(serverId)).bindings.get(t),
      discovery: async () => (await this.toolsOf(serverId)).discovery,
    });
  }

  private toolsOf(serverId: string): Promise<ServerTools> {
    let found = this.tools.get(serverId);
    if (!found) {
      const { store, tenant } = this.options;
      found = Promise.all([
        store.bindings(tenant, serverId),
        store.discovery(tenant, serverId),
      ]).then(([bindings, discovery]) => ({
        bindings: new Map(bindings.map((b) => [b.tool, b])),
        discovery,
      }));
      this.tools.set(serverId, found);
    }
    return found;
  }
}

function byId(servers: McpServerRecord[]): Map<string, McpServerRecord> {
  return new Map(servers.map((s) => [s.id, s]));
}
