import { canonicalDigest, canonicalJson } from '../core/index.js';

/** The fields of an upstream tool that its digest covers. */
export const DIGEST_FIELDS = [
  'name',
  'title',
  'description',
  'inputSchema',
  'outputSchema',
  'annotations',
] as const;
export type DigestField = (typeof DIGEST_FIELDS)[number];

/** An upstream tool as discovered, reduced to the fields its digest covers. */
export interface UpstreamTool {
  name: string;
  title?: string;
  description?: string;
  inputSchema: Record<string, unknown>;
  outputSchema?: Record<string, unknown>;
  annotations?: Record<string, unknown>;
}

/** One changed field of a tool: its old and new values (undefined when absent). */
export interface ToolFieldChange {
  field: DigestField;
  old: unknown;
  new: unknown;
}

/** The digested fields of an upstream tool as listed, absent fields omitted. */
export function upstreamTool(tool: Record<string, unknown> & { name: string }): UpstreamTool {
  const out: Record<string, unknown> = {};
  for (const f of DIGEST_FIELDS) if (tool[f] !== undefined) out[f] = tool[f];
  return out as unknown as UpstreamTool;
}

/** SHA-256 hex of the JCS of the tool's name, title, description, schemas and annotations. */
export function toolDigest(tool: UpstreamTool): string {
  return canonicalDigest(
    upstreamTool(tool as unknown as Record<string, unknown> & { name: string }),
  );
}

/** Which digested fields differ between two versions of a tool, with old and new values. */
export function diffTool(before: UpstreamTool, after: UpstreamTool): ToolFieldChange[] {
  const changes: ToolFieldChange[] = [];
  for (const field of DIGEST_FIELDS) {
    const a = before[field];
    const b = after[field];
    const same =
      a === undefined || b === undefined ? a === b : canonicalJson(a) === canonicalJson(b);
    if (!same) changes.push({ field, old: a, new: b });
  }
  return changes;
}
