import { EventType, canonicalJson } from '../core/index.js';
import type { AuditRecordDraft, OutboxEvent } from '../core/index.js';
import type { Discovery, McpBinding } from './mcp-binding.js';
import { audit, event, subject } from './mcp-ledger.js';
import { diffTool } from './tool-digest.js';

/** What a new discovery changes: the discovery, the bindings it unbinds, and their ledger. */
interface DiscoveryPlan {
  discovery: Discovery;
  bindings: McpBinding[];
  audit: AuditRecordDraft[];
  events: OutboxEvent[];
}

/**
 * Compares a discovery with the last one and the bindings: every bound tool whose digest changed
 * is unbound (`mcp.tool.unbound` with a diff of the changed fields, and `McpToolUnbound`); an
 * unbound one that changed again gets the new diff. Tools that appear stay unbound until a
 * maintainer binds them; tools that disappear keep their binding and fail as gone.
 * @returns null when nothing changed (nothing to write).
 */
export function planDiscovery(
  prev: Discovery | undefined,
  bindings: McpBinding[],
  discovery: Discovery,
): DiscoveryPlan | null {
  const { tenant, serverId: id, at } = discovery;
  const byName = new Map(discovery.tools.map((t) => [t.tool.name, t]));
  const changed: McpBinding[] = [];
  const records: AuditRecordDraft[] = [];
  const events: OutboxEvent[] = [];
  for (const b of bindings) {
    const now = byName.get(b.tool);
    if (!now || now.digest === b.digest || now.digest === b.change?.digest) continue;
    const changes = diffTool(b.approved, now.tool);
    const wasBound = b.state === 'bound';
    changed.push({ ...b, state: 'unbound', change: { digest: now.digest, changes, at } });
    const data = {
      serverId: id,
      tool: b.tool,
      descriptor: b.descriptor,
      approvedDigest: b.digest,
      digest: now.digest,
      changedFields: changes.map((c) => c.field),
      changes,
    };
    const sub = `${subject(id)}/tool/${b.tool}`;
    records.push(
      audit(tenant, wasBound ? 'mcp.tool.unbound' : 'mcp.tool.changed', sub, at, 'system', data),
    );
    if (wasBound)
      events.push(event(EventType.McpToolUnbound, tenant, `${id}/tool/${b.tool}`, at, data));
  }
  const before = new Map((prev?.tools ?? []).map((t) => [t.tool.name, t.digest]));
  const same =
    prev !== undefined &&
    canonicalJson({ t: prev.tools, r: prev.resources, p: prev.prompts }) ===
      canonicalJson({ t: discovery.tools, r: discovery.resources, p: discovery.prompts });
  if (same && changed.length === 0) return null;
  records.unshift(
    audit(tenant, 'mcp.server.discovered', subject(id), at, 'system', {
      serverId: id,
      added: discovery.tools.filter((t) => !before.has(t.tool.name)).map((t) => t.tool.name),
      removed: [...before.keys()].filter((n) => !byName.has(n)),
      changed: discovery.tools
        .filter((t) => before.has(t.tool.name) && before.get(t.tool.name) !== t.digest)
        .map((t) => t.tool.name),
      tools: discovery.tools.length,
      resources: discovery.resources.length,
      prompts: discovery.prompts.length,
    }),
  );
  return { discovery, bindings: changed, audit: records, events };
}
