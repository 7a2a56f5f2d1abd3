import { useState } from 'preact/hooks';
import { api, messageOf } from '../api.js';
import { Busy, Empty, ErrorNote, Field, StatusBadge } from '../components/bits.js';
import type { Invocation } from '../types.js';
import { useResource } from '../use-resource.js';
import { Timeline } from './timeline.js';

const EVENTS = ['ToolEffectUncertain', 'ToolEffectResolved'];

/** The executor's last words: the error the call ended with, or the last stage's reason. */
function lastWords(i: Invocation): string {
  if (i.error) return `${i.error.code}: ${i.error.message}`;
  return i.trace.at(-1)?.reason ?? 'nothing recorded';
}

/** Uncertain effects: each call, its trace and last words; confirm or deny it with evidence. */
export function UncertainView() {
  const list = useResource(
    async () => (await api<{ invocations: Invocation[] }>('GET', '/v1/uncertain')).invocations,
    [],
    EVENTS,
  );
  return (
    <section aria-labelledby="uncertain-title">
      <h1 id="uncertain-title">Uncertain effects</h1>
      <p class="subtle">
        These calls may or may not have had their effect. Nothing retries them until you say which,
        from the receipt and what you can see outside Gatehouse.
      </p>
      <ErrorNote message={list.error} />
      {list.value === undefined && list.loading ? (
        <Busy label="Loading uncertain effects…" />
      ) : null}
      {list.value?.length === 0 ? <Empty>No uncertain effects to resolve.</Empty> : null}
      <ul class="cards" aria-label="Uncertain effects">
        {(list.value ?? []).map((i) => (
          <li key={i.id}>
            <UncertainCard invocation={i} onResolved={list.reload} />
          </li>
        ))}
      </ul>
    </section>
  );
}

function UncertainCard(props: { invocation: Invocation; onResolved: () => void }) {
  const i = props.invocation;
  const [evidence, setEvidence] = useState('');
  const [busy, setBusy] = useState<'confirmed' | 'denied' | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [result, setResult] = useState<string | null>(null);
  const titleId = `uncertain-${i.id}`;
  const resolve = async (effect: 'confirmed' | 'denied') => {
    if (evidence.trim() === '') {
      setError('Write the evidence you decided on (what you checked, where).');
      return;
    }
    setBusy(effect);
    setError(null);
    try {
      const r = await api<Invocation>(
        'POST',
        `/v1/invocations/${encodeURIComponent(i.id)}/resolve`,
        {
          effect,
          evidence,
        },
      );
      setResult(`Resolved: effect ${r.resolution?.effect ?? effect}.`);
      props.onResolved();
    } catch (e) {
      setError(messageOf(e));
    } finally {
      setBusy(null);
    }
  };
  return (
    <article class="card" aria-labelledby={titleId}>
      <header>
        <h3 id={titleId}>
          {i.tool.id}@{i.tool.version}
        </h3>
        <StatusBadge status={i.status} />
        <span class={`class class-${i.effectiveClass ?? 'unknown'}`}>{i.effectiveClass}</span>
      </header>
      <dl class="facts">
        <Field name="Invocation">
          <a href={`/studio/invocations/${encodeURIComponent(i.id)}`}>{i.id}</a> (receipt there)
        </Field>
        <Field name="Environment">
          {i.project}/{i.environment}
        </Field>
        <Field name="Last words">
          <span data-testid="last-words">{lastWords(i)}</span>
        </Field>
        <Field name="Request hash">
          <code class="hash">{i.requestHash}</code>
        </Field>
      </dl>
      <details>
        <summary>Trace ({i.trace.length} stages)</summary>
        <Timeline trace={i.trace} />
      </details>
      <form class="decide" onSubmit={(e) => e.preventDefault()}>
        <label for={`evidence-${i.id}`}>Evidence</label>
        <textarea
          id={`evidence-${i.id}`}
          rows={2}
          maxLength={4000}
          value={evidence}
          onInput={(e) => setEvidence(e.currentTarget.value)}
        />
        <div class="actions">
          <button
            type="button"
            class="approve"
            disabled={busy !== null}
            aria-busy={busy === 'confirmed'}
            onClick={() => void resolve('confirmed')}
          >
            {busy === 'confirmed' ? 'Confirming…' : 'Confirm: it happened'}
          </button>
          <button
            type="button"
            class="reject"
            disabled={busy !== null}
            aria-busy={busy === 'denied'}
            onClick={() => void resolve('denied')}
          >
            {busy === 'denied' ? 'Denying…' : 'Deny: it did not happen'}
          </button>
        </div>
        <ErrorNote message={error} />
        {result ? <p role="status">{result}</p> : null}
      </form>
    </article>
  );
}
