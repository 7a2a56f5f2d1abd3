import { canonicalJson, sha256Hex, utf8Prefix } from '../../core/index.js';
import type { ArtifactStore } from '../../audit/index.js';
import { RemovalTally } from '../../secrets/index.js';
import { sanitizeExecution } from '../sanitized-execution.js';
import type { PipelineContext } from '../pipeline-context.js';
import type { StageResult } from '../stage.js';

/**
 * Stage 9: makes the execution safe to keep, through its one sanitized view
 * ({@link sanitizeExecution}): the call's brokered credential values (in their encodings) and
 * known secret patterns leave the output, the error, the egress log and the trace. Bounds the
 * output's size (the whole sanitized output is kept as a content-addressed artifact); records
 * digests of the full output (before redaction) and of the returned one, and what was removed
 * (kinds, never values); tags provenance.
 */
export async function sanitizeStage(
  ctx: PipelineContext,
  artifacts: ArtifactStore,
  maxOutputBytes: number,
): Promise<StageResult> {
  const { record } = ctx;
  const view = sanitizeExecution(
    { result: ctx.execution!, egress: ctx.egress, trace: record.trace },
    ctx.redactor,
  );
  ctx.sanitized = view;
  record.provenance = {
    tool: record.tool.id,
    version: record.tool.version,
    invocation: record.id,
    untrusted: true,
  };
  record.trace = view.trace;
  record.egress = view.egress;
  const { output } = view.result;
  let note = 'no output';
  if (view.sha256Full !== undefined && view.outputJson !== undefined) {
    const { sha256Full } = view;
    const { text: full, sha256: sha256Sanitized } = view.outputJson;
    const bytes = Buffer.byteLength(full);
    if (bytes <= maxOutputBytes) {
      record.output = output ?? null;
      record.outputInfo = { sha256Full, sha256Sanitized, bytes, truncated: false };
      note = `output of ${bytes} bytes is within the ${maxOutputBytes}-byte bound`;
    } else {
      const artifact = await artifacts.put(Buffer.from(full));
      const preview = utf8Prefix(full, maxOutputBytes - 256);
      record.output = {
        truncated: true,
        preview,
        marker: `[output cut at ${Buffer.byteLength(preview)} of ${bytes} bytes; the whole output is artifact sha256:${artifact}]`,
        artifact,
      };
      record.outputInfo = {
        sha256Full,
        sha256Sanitized: sha256Hex(canonicalJson(record.output)),
        bytes,
        truncated: true,
        artifact,
      };
      note = `output of ${bytes} bytes cut to the ${maxOutputBytes}-byte bound; kept whole as artifact ${artifact}`;
    }
  }
  const removals = view.removals;
  const tally = new RemovalTally();
  for (const r of [
    ...record.redactions,
    ...removals,
    ...ctx.executorRemovals,
    ...ctx.captures.flatMap((c) => c.removals()),
  ])
    tally.add(r.kind, r.encoding, r.count);
  record.redactions = tally.list();
  const removed = record.redactions
    .map(
      (r) =>
        `${r.count}× ${r.kind}${r.encoding && r.encoding !== 'plain' ? ` (${r.encoding})` : ''}`,
    )
    .join(', ');
  return {
    outcome: 'continue',
    reason: `${note}; ${removed ? `removed ${removed}` : 'no secrets found'}`,
    ...(record.redactions.length > 0 ? { details: { redactions: record.redactions } } : {}),
  };
}
