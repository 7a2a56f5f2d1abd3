import { sha256Hex } from '../../core/index.js';

/** A tool version, as a release closure names it. */
export interface ToolRef {
  id: string;
  version: string;
  /**
   * The name its upstream MCP server gives it, when the release keeps upstream names
   * (`mcp.toolNames: "upstream"`) and it is an `mcp` tool; else absent.
   */
  upstreamName?: string;
}

/** MCP tool names allow `[A-Za-z0-9_-]`, at most 64 characters. */
const MAX_NAME = 64;
const unsafe = /[^A-Za-z0-9_-]/g;
const SAFE_NAME = /^[A-Za-z0-9_-]{1,64}$/;

/**
 * The MCP-safe names of a release closure's tools, both ways. A tool's name is
 * `<id>__<version>` with every other character made `_` (`demo/echo@1.0.0` → `demo_echo__1_0_0`);
 * where that is too long or two tools of the closure would share it, the name is cut and ends in
 * `_h` + a prefix of the SHA-256 of `id@version`. Names depend only on the closure, so they are
 * stable for an agent release whatever state its tools are in.
 *
 * A tool that carries its `upstreamName` (a release that keeps upstream names) is offered under
 * that name instead, so prompts written against the upstream server keep working — unless the
 * name is not MCP-safe, or another tool of the closure has the same upstream name or versioned
 * name; then all of those keep their versioned names (never a name that depends on order).
 */
export class McpToolNames {
  private readonly byName = new Map<string, ToolRef>();
  private readonly byRef = new Map<string, string>();

  constructor(closure: readonly ToolRef[]) {
    const refs = [...closure].sort((a, b) => key(a).localeCompare(key(b)));
    const plainCount = new Map<string, number>();
    for (const r of refs) plainCount.set(plain(r), (plainCount.get(plain(r)) ?? 0) + 1);
    const plainNames = new Set(refs.map(plain).filter((p) => plainCount.get(p) === 1));
    const upstreamCount = new Map<string, number>();
    for (const r of refs)
      if (r.upstreamName !== undefined)
        upstreamCount.set(r.upstreamName, (upstreamCount.get(r.upstreamName) ?? 0) + 1);
    const kept = (r: ToolRef): boolean =>
      r.upstreamName !== undefined &&
      SAFE_NAME.test(r.upstreamName) &&
      upstreamCount.get(r.upstreamName) === 1 &&
      !plainCount.has(r.upstreamName);
    for (const r of refs.filter(kept)) {
      this.byName.set(r.upstreamName!, { id: r.id, version: r.version });
      this.byRef.set(key(r), r.upstreamName!);
    }
    for (const r of refs) {
      if (kept(r)) continue;
      const p = plain(r);
      let name = p;
      if (p.length > MAX_NAME || plainCount.get(p) !== 1) {
        const digest = sha256Hex(key(r));
        // Longer digests only if a cut name meets another name (practically never).
        for (let n = 10; ; n += 2) {
          const suffix = `_h${digest.slice(0, n)}`;
          name = `${p.slice(0, MAX_NAME - suffix.length)}${suffix}`;
          if (!this.byName.has(name) && !plainNames.has(name) && !upstreamCount.has(name)) break;
        }
      }
      this.byName.set(name, { id: r.id, version: r.version });
      this.byRef.set(key(r), name);
    }
  }

  /** The MCP name of a closure tool. @throws Error when the tool is not in the closure (a bug). */
  nameOf(ref: ToolRef): string {
    const name = this.byRef.get(key(ref));
    if (name === undefined) throw new Error(`${key(ref)} is not in this closure`);
    return name;
  }

  /** The closure tool an MCP name stands for, or undefined. */
  refOf(name: string): ToolRef | undefined {
    return this.byName.get(name);
  }
}

function key(r: ToolRef): string {
  return `${r.id}@${r.version}`;
}

function plain(r: ToolRef): string {
  return `${r.id.replace(unsafe, '_')}__${r.version.replace(unsafe, '_')}`;
}
