import type { SideEffectClass } from '../core/index.js';
import type { ExecutionReport, ExecutionResult } from './executor.js';

/** A report of a call that ended without the tool's result. */
export type StoppedReport = Extract<ExecutionReport, { status: 'stopped' }>;

/** The outcome of a call that ended without the tool's result: `failed` or `uncertain`. */
export type StoppedResult = Exclude<ExecutionResult, { status: 'observed' }>;

/**
 * The one rule that turns what an executor observed into the call's outcome: a result seen is
 * `observed`; a call that ended without one is `uncertain` when the tool may have started acting
 * and the call's effective class can change something, and `failed` (nothing took effect)
 * otherwise. An uncertain outcome's message says why, with the executor's note. The output and
 * the full output (for its digest) pass through as the executor reported them.
 */
export function judgeExecution(
  report: StoppedReport,
  effectiveClass: SideEffectClass,
): StoppedResult;
export function judgeExecution(
  report: ExecutionReport,
  effectiveClass: SideEffectClass,
): ExecutionResult;
export function judgeExecution(
  report: ExecutionReport,
  effectiveClass: SideEffectClass,
): ExecutionResult {
  const full = report.full !== undefined ? { full: report.full } : {};
  if (report.status === 'observed') return { status: 'observed', output: report.output, ...full };
  const { code, message, output } = report;
  const outputs = { ...(output !== undefined ? { output } : {}), ...full };
  if (report.effectMayHaveStarted && effectiveClass !== 'read')
    return {
      status: 'uncertain',
      code,
      message: report.uncertainNote !== undefined ? `${message}; ${report.uncertainNote}` : message,
      ...outputs,
    };
  return { status: 'failed', code, message, ...outputs };
}
