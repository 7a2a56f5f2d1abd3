import { StatusBadge } from '../components/bits.js';
import type { TraceEntry } from '../types.js';

/** Milliseconds between two ISO times, as text. */
function duration(from: string, to: string): string {
  const ms = Date.parse(to) - Date.parse(from);
  return Number.isFinite(ms) && ms >= 0 ? `${ms} ms` : '';
}

/** An invocation's stages in order: decision, reason, and how long since the stage before. */
export function Timeline({ trace, start }: { trace: TraceEntry[]; start?: string }) {
  return (
    <ol class="timeline" aria-label="Stage timeline">
      {trace.map((t, i) => {
        const before = i === 0 ? start : trace[i - 1]?.at;
        return (
          <li key={`${t.stage}-${i}`}>
            <strong>{t.stage}</strong> <StatusBadge status={t.decision} />{' '}
            {before ? <small class="subtle">{duration(before, t.at)}</small> : null}
            <div>{t.reason}</div>
          </li>
        );
      })}
    </ol>
  );
}
