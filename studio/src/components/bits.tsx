import type { ComponentChildren } from 'preact';

/** A state as a coloured word (never colour alone: the word is the meaning). */
export function StatusBadge({ status }: { status: string }) {
  return (
    <span class={`badge badge-${status.replace(/[^a-z_-]/g, '')}`}>{status.replace('_', ' ')}</span>
  );
}

/** Shown where a list is empty: says so in words. */
export function Empty({ children }: { children: ComponentChildren }) {
  return <p class="empty">{children}</p>;
}

/** An error from the gateway, announced to screen readers. */
export function ErrorNote({ message }: { message: string | null }) {
  if (message === null) return null;
  return (
    <p class="error" role="alert">
      {message}
    </p>
  );
}

/** A progress line for waits: visible, and announced politely. */
export function Busy({ label }: { label: string }) {
  return (
    <p class="busy" role="status" aria-live="polite">
      <span class="spinner" aria-hidden="true" />
      {label}
    </p>
  );
}

/** JSON, pretty-printed, as it was sent. */
export function JsonView({ value, label }: { value: unknown; label: string }) {
  return (
    <pre class="code" aria-label={label} tabIndex={0}>
      {JSON.stringify(value, null, 2)}
    </pre>
  );
}

/** A unified diff with added and removed lines marked (by sign and colour). */
export function DiffView({ diff, label }: { diff: string; label: string }) {
  return (
    <pre class="code diff" aria-label={label} tabIndex={0}>
      {diff.split('\n').map((line, i) => (
        <span
          key={i}
          class={
            line.startsWith('+')
              ? 'add'
              : line.startsWith('-')
                ? 'del'
                : line.startsWith('@')
                  ? 'hunk'
                  : ''
          }
        >
          {line}
          {'\n'}
        </span>
      ))}
    </pre>
  );
}

/**
 * A time, as "3 min ago" / "in 2 h", with the exact time on hover and for assistive tech. `now` is
 * the gateway's time (`useServerNow`: the browser's clock corrected by the offset the API's `Date`
 * headers show), so a browser clock minutes off still reads true. A `past` time (stamped by the
 * gateway) within a second of now, on either side, reads "just now": the offset is known to about
 * a second, and a request is never made "in 1 s".
 */
export function When({ at, now, past }: { at: string; now: number; past?: boolean }) {
  const ms = Date.parse(at) - now;
  if (past && ms > -1000)
    return (
      <time dateTime={at} title={at}>
        just now
      </time>
    );
  const abs = Math.abs(ms);
  const text =
    abs < 60_000
      ? `${Math.round(abs / 1000)} s`
      : abs < 3_600_000
        ? `${Math.round(abs / 60_000)} min`
        : abs < 86_400_000
          ? `${Math.round(abs / 3_600_000)} h`
          : `${Math.round(abs / 86_400_000)} d`;
  return (
    <time dateTime={at} title={at}>
      {ms < 0 ? `${text} ago` : `in ${text}`}
    </time>
  );
}

/** A label and its value in a description list. */
export function Field({ name, children }: { name: string; children: ComponentChildren }) {
  return (
    <>
      <dt>{name}</dt>
      <dd>{children}</dd>
    </>
  );
}
