/** The release closure part of an agent release that agent permission needs. */
export interface ReleaseClosure {
  agentId: string;
  version: string;
  closure: readonly { id: string; version: string }[];
}

/** Agent permission's answer (DESIGN §3 stage 2); a refusal is a value. */
export type AgentPermission = { allowed: true } | { allowed: false; reason: string };

interface ClosureIndex {
  exact: Set<string>;
  versionsById: Map<string, string[]>;
}

const indexes = new WeakMap<object, ClosureIndex>();

/**
 * May this agent release call this tool version? Only when the exact id and version are in its
 * release closure. The reason of a refusal says whether the tool is absent from the closure or
 * another version of it is pinned (and which). O(1): the closure is indexed once per closure array
 * (releases are immutable).
 */
export function checkAgentPermission(
  release: ReleaseClosure,
  tool: { id: string; version: string },
): AgentPermission {
  const index = indexOf(release.closure);
  if (index.exact.has(key(tool.id, tool.version))) return { allowed: true };
  const agent = `${release.agentId}@${release.version}`;
  const pinned = index.versionsById.get(tool.id);
  if (pinned === undefined) {
    return {
      allowed: false,
      reason: `Agent ${agent} may not call ${tool.id}: the tool is not in its release closure. Publish an agent release whose closure includes ${tool.id}@${tool.version}.`,
    };
  }
  const versions = pinned.map((v) => `${tool.id}@${v}`).join(', ');
  return {
    allowed: false,
    reason: `Agent ${agent} may not call ${tool.id}@${tool.version}: its release closure pins ${versions}. Call that version, or publish an agent release that pins ${tool.id}@${tool.version}.`,
  };
}

function indexOf(closure: ReleaseClosure['closure']): ClosureIndex {
  let index = indexes.get(closure);
  if (!index) {
    index = { exact: new Set(), versionsById: new Map() };
    for (const t of closure) {
      index.exact.add(key(t.id, t.version));
      const versions = index.versionsById.get(t.id) ?? [];
      versions.push(t.version);
      index.versionsById.set(t.id, versions);
    }
    indexes.set(closure, index);
  }
  return index;
}

function key(id: string, version: string): string {
  return `${id}\u0000${version}`;
}
