import type { CallToolResult } from '@modelcontextprotocol/server';
import type { InvocationRecord } from '../../invocation/index.js';
import type { ToolRegistry } from '../../tools/index.js';

/** Most screenshots one result carries as images, and the largest one sent. */
const MAX_IMAGES = 10;
const MAX_IMAGE_BYTES = 8 * 1024 * 1024;

/**
 * Appends the screenshots of an observed `browser` call to its result as MCP `image` blocks (PNG,
 * base64), read from the artifact store by the digests its output names, in step order. Only for
 * tools of kind `browser` (whose executor wrote those digests), so no other tool's output can
 * name an artifact to be read. A screenshot missing from the store (retention) or too large is
 * left out; the output still names it.
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
  if (kind !== 'browser') return;
  const steps = (record.output as { steps?: unknown } | null)?.steps;
  if (!Array.isArray(steps)) return;
  let added = 0;
  for (const step of steps as { action?: unknown; artifact?: unknown }[]) {
    if (added >= MAX_IMAGES) break;
    if (step.action !== 'screenshot' || typeof step.artifact !== 'string') continue;
    if (!/^[0-9a-f]{64}$/.test(step.artifact)) continue;
    const png = await artifacts.get(step.artifact);
    if (png === undefined || png.length > MAX_IMAGE_BYTES) continue;
    result.content.push({ type: 'image', data: png.toString('base64'), mimeType: 'image/png' });
    added += 1;
  }
}
