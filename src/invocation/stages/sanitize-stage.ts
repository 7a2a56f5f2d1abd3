import { canonicalJson, sha256Hex } from '../../core/index.js';
import type { ArtifactStore } from '../../audit/index.js';
import type { PipelineContext } from '../pipeline-context.js';
import type { StageResult } from '../stage.js';

/**
 * Stage 9: bounds the output's size (the whole output is kept as a content-addressed artifact),
 * records digests of the full and the returned output, and tags provenance. Secret stripping
 * joins this stage with the credential broker.
 */
export async function sanitizeStage(
  ctx: PipelineContext,
  artifacts: ArtifactStore,
  maxOutputBytes: number,
): Promise<StageResult> {
  const { record } = ctx;
  const execution = ctx.execution!;
  record.provenance = {
    tool: record.tool.id,
    version: record.tool.version,
    invocation: record.id,
    untrusted: true,
  };
  if (execution.status !== 'observed') {
    return { outcome: 'continue', reason: 'no output to sanitize' };
  }
  const full = canonicalJson(execution.output ?? null);
  const bytes = Buffer.byteLength(full);
  const sha256Full = sha256Hex(full);
  if (bytes <= maxOutputBytes) {
    record.output = execution.output ?? null;
    record.outputInfo = { sha256Full, sha256Sanitized: sha256Full, bytes, truncated: false };
    return {
      outcome: 'continue',
      reason: `output of ${bytes} bytes is within the ${maxOutputBytes}-byte bound`,
    };
  }
  const artifact = await artifacts.put(Buffer.from(full));
  const preview = full.slice(0, Math.max(0, maxOutputBytes - 256));
  record.output = {
    truncated: true,
    preview,
    marker: `[output cut at ${preview.length} of ${bytes} bytes; the whole output is artifact sha256:${artifact}]`,
    artifact,
  };
  record.outputInfo = {
    sha256Full,
    sha256Sanitized: sha256Hex(canonicalJson(record.output)),
    bytes,
    truncated: true,
    artifact,
  };
  return {
    outcome: 'continue',
    reason: `output of ${bytes} bytes cut to the ${maxOutputBytes}-byte bound; kept whole as artifact ${artifact}`,
    details: { artifact },
  };
}
