import type { SideEffectClass } from '../core/index.js';
import type { ToolFieldChange, UpstreamTool } from './tool-digest.js';

/** A tool as last discovered on a server, with its digest. */
export interface DiscoveredTool {
  tool: UpstreamTool;
  digest: string;
}

/** What discovery found on a server: its tools, resources and prompts. */
export interface Discovery {
  serverId: string;
  tenant: string;
  tools: DiscoveredTool[];
  /** Resources and resource templates by URI (or URI template) and name. */
  resources: { uri: string; name: string }[];
  prompts: { name: string; description?: string }[];
  at: string;
}

/** Whether a binding may be called. */
export const BindingState = { bound: 'bound', unbound: 'unbound' } as const;
export type BindingState = (typeof BindingState)[keyof typeof BindingState];

/**
 * A maintainer's decision that one tool of one server, with one digest, is the descriptor
 * `descriptor.id@descriptor.version`. Bindings are per server id, so two servers' tools of the
 * same name never shadow each other.
 */
export interface McpBinding {
  tenant: string;
  serverId: string;
  tool: string;
  /** The digest the maintainer approved. */
  digest: string;
  /** The tool as approved, for diffs against what the server lists later. */
  approved: UpstreamTool;
  descriptor: { id: string; version: string };
  class: SideEffectClass;
  state: BindingState;
  /** Set while unbound because the upstream changed the tool: what changed and its new digest. */
  change: { digest: string; changes: ToolFieldChange[]; at: string } | null;
  boundBy: string;
  at: string;
}
