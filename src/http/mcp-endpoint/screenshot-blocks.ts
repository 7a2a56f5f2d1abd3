import type { CallToolResult } from '@modelcontextprotocol/server';
import type { InvocationRecord } from '../../invocation/index.js';
import type { ToolRegistry } from '../../tools/index.js';

/** Most screenshots one result carries as images, and the largest one sent. */
const MAX_IMAGES = 10;
const MAX_IMAGE_BYTES = 8 * 1024 * 1024;

/**
 * Appends the screenshots of an observed `browser` or `computer-use` call to its result as MCP
 * `image` blocks (PNG, base64), read from the artifact store by the digests its output names, in
 * order (a computer-use call's closing screenshot last). Only for tools of those kinds (whose
 * executors wrote those digests), so no other tool's output can name an artifact to be read. A
 * screenshot missing from the store (retention) or too large is left out; the output still names it.
 */
export async function addScreenshots(
  result: CallToolResult,
  record: InvocationRecord,
  registry: ToolRegistry,
  artifacts: { get(sha256: string): Promise<Buffer | undefined> },
): Promise<void> {
  if (record.status !== 'observed') return;
  const kind = registry.tool(record.tenant, record.tool.id, record.tool.version)?.stored.descriptor
    .kind;
  if (kind !== 'browser' && kind !== 'computer-use') return;
  const digests = kind === 'browser' ? browserShots(record.output) : desktopShots(record.output);
  let added = 0;
  for (const digest of digests) {
    if (added >= MAX_IMAGES) break;
    if (!/^[0-9a-f]{64}$/.test(digest)) continue;
    const png = await artifacts.get(digest);
    if (png === undefined || png.length > MAX_IMAGE_BYTES) continue;
    result.content.push({ type: 'image', data: png.toString('base64'), mimeType: 'image/png' });
    added += 1;
  }
}

type Shot = { action?: unknown; artifact?: unknown };

/** The screenshot digests a browser call's steps name, in order. */
function browserShots(output: unknown): string[] {
  const steps = (output as { steps?: unknown } | null)?.steps;
  return Array.isArray(steps) ? shotsOf(steps as Shot[]) : [];
}

/** A computer-use call's screenshot actions, then its closing screenshot (once). */
function desktopShots(output: unknown): string[] {
  const o = output as { actions?: unknown; screenshot?: Shot } | null;
  const shots = Array.isArray(o?.actions) ? shotsOf(o.actions as Shot[]) : [];
  const last = o?.screenshot?.artifact;
  if (typeof last === 'string' && shots.at(-1) !== last) shots.push(last);
  return shots;
}

function shotsOf(steps: Shot[]): string[] {
  return steps
    .filter((s) => s.action === 'screenshot' && typeof s.artifact === 'string')
    .map((s) => s.artifact as string);
}
