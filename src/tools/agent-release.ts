import type { SideEffectClass } from '../core/index.js';

/** An agent version with its release closure and the maximum class of its policy (DESIGN §1). */
export interface AgentRelease {
  agentId: string;
  version: string;
  /** The exact tool versions the agent may call. */
  closure: { id: string; version: string }[];
  policy: { maxClass: SideEffectClass };
  /**
   * How `/mcp` names its tools: `versioned` (default, `id__version`) or `upstream`, where an
   * `mcp` tool keeps its upstream server's name when no other tool of the closure has it.
   */
  mcp?: { toolNames: McpToolNaming };
}

/** How an agent release's tools are named on `/mcp`. */
export type McpToolNaming = 'versioned' | 'upstream';

/** `agentId@version`. */
export function agentReleaseRef(r: { agentId: string; version: string }): string {
  return `${r.agentId}@${r.version}`;
}
