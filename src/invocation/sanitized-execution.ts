import { canonicalJson, sha256Hex } from '../core/index.js';
import type { Redactor, Removal } from '../secrets/index.js';
import type { ExecutionResult } from './executor.js';
import type { InvocationRecord } from './invocation-record.js';
import type { TraceEntry } from './stage.js';

/** One connection the call's sandbox tried through the egress proxy, as recorded. */
export type EgressEntry = InvocationRecord['egress'][number];

/**
 * Everything of one call that came out of the executor and its sandbox, as it came: it may hold
 * the call's secrets. Never stored; only its {@link SanitizedExecution} is.
 */
export interface RawExecution {
  result: ExecutionResult;
  /** The egress proxy's log of the call, as the proxy wrote it (host names lower-cased). */
  egress: readonly EgressEntry[];
  /** The record's trace so far: stage reasons and details quote executor errors and egress. */
  trace: readonly TraceEntry[];
}

/** What of one call's execution may be stored, returned, audited and signed: nothing secret. */
export interface SanitizedExecution {
  /** The executor's outcome with its code, message and output redacted. */
  result:
    | { status: 'observed'; output: unknown }
    | { status: 'failed' | 'uncertain'; code: string; message: string; output?: unknown };
  egress: EgressEntry[];
  trace: TraceEntry[];
  /** What the redactor removed here (kinds and counts, never values). */
  removals: Removal[];
  /**
   * SHA-256 of the canonical JSON of the output as the tool produced it, before redaction
   * (`ExecutionResult.full` where the executor redacted while capturing); absent without output.
   */
  sha256Full?: string;
  /** The sanitized output's canonical JSON text and its SHA-256; absent without output. */
  outputJson?: { text: string; sha256: string };
}

/**
 * The one place an execution's result is made safe to keep: every field that leaves the executor
 * (output, error code and message, the egress log, the trace that quotes them) passes the call's
 * redactor. Fields written by a channel that folds case (the proxy lower-cases host names, and the
 * trace and errors quote them) are matched in any case. Nothing of `raw` is changed.
 */
export function sanitizeExecution(raw: RawExecution, redactor: Redactor): SanitizedExecution {
  const removals: Removal[] = [];
  const clean = <T>(value: T, foldCase: boolean): T => {
    const r = redactor.redactJson(value, { foldCase });
    removals.push(...r.removals);
    return r.value;
  };
  const egress = clean([...raw.egress], true);
  // The execute stage's trace entry shows the egress log itself: it is cleaned above, so the
  // trace is cleaned without it and shows the cleaned copy (each removal counted once).
  const shows = raw.trace.map((t) => t.details?.egress === raw.egress);
  const trace = clean(
    raw.trace.map((t, i) => (shows[i] ? { ...t, details: { ...t.details, egress: [] } } : t)),
    true,
  ).map((t, i) => (shows[i] ? { ...t, details: { ...t.details, egress } } : t));
  const { result } = raw;
  let output: { output?: unknown } = {};
  let digests: Pick<SanitizedExecution, 'sha256Full' | 'outputJson'> = {};
  if (result.output !== undefined) {
    const before = removals.length;
    output = { output: clean(result.output, false) };
    const text = canonicalJson(output.output ?? null);
    const sha256 = sha256Hex(text);
    // Unredacted and captured whole, the output's canonical text is the full one's.
    const same = result.full === undefined && removals.length === before;
    digests = {
      sha256Full: same ? sha256 : sha256Hex(canonicalJson(result.full ?? result.output)),
      outputJson: { text, sha256 },
    };
  }
  const sanitized: SanitizedExecution['result'] =
    result.status === 'observed'
      ? { status: 'observed', output: output.output }
      : {
          status: result.status,
          code: clean(result.code, true),
          message: clean(result.message, true),
          ...output,
        };
  return { result: sanitized, egress, trace, removals, ...digests };
}
