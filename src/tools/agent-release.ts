import type { SideEffectClass } from '../core/index.js';

/** An agent version with its release closure and the maximum class of its policy (DESIGN §1). */
export interface AgentRelease {
  agentId: string;
  version: string;
  /** The exact tool versions the agent may call. */
  closure: { id: string; version: string }[];
  policy: { maxClass: SideEffectClass };
}

/** `agentId@version`. */
export function agentReleaseRef(r: { agentId: string; version: string }): string {
  return `${r.agentId}@${r.version}`;
}
