import type { ComponentChildren } from 'preact';
import { useState } from 'preact/hooks';
import { ErrorNote } from '../components/bits.js';
import { refusal } from './refusal.js';

/**
 * A form of a few fields (its children) and one button that sends one write: `act` runs it and
 * answers what was done, announced under the button; while it runs the button is busy, and a
 * refusal of the gateway is shown in its place.
 */
export function ActionForm(props: {
  /** The button's words, and while `act` runs. */
  action: string;
  busyAction: string;
  act: () => Promise<string>;
  /** The form's accessible name, when its context gives it none. */
  label?: string;
  class?: string;
  children?: ComponentChildren;
}) {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const [done, setDone] = useState<string | null>(null);
  const run = async () => {
    setBusy(true);
    setError(null);
    try {
      setDone(await props.act());
    } catch (e) {
      setError(refusal(e));
    } finally {
      setBusy(false);
    }
  };
  return (
    <form class={props.class} aria-label={props.label} onSubmit={(e) => e.preventDefault()}>
      {props.children}
      <div class="actions">
        <button
          type="button"
          class="approve"
          disabled={busy}
          aria-busy={busy}
          onClick={() => void run()}
        >
          {busy ? props.busyAction : props.action}
        </button>
      </div>
      <ErrorNote message={error} />
      {done ? <p role="status">{done}</p> : null}
    </form>
  );
}
