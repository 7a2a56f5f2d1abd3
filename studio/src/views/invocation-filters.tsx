import { useEffect, useState } from 'preact/hooks';
import { fromLocalInput, localInput } from '../invocation-filter-state.js';
import type { FilterKey, Filters } from '../invocation-filter-state.js';
import { INVOCATION_STATUSES } from '../invocation-states.js';

const TEXT_FIELDS: { key: FilterKey; label: string; placeholder: string }[] = [
  { key: 'tool', label: 'Tool', placeholder: 'demo/echo' },
  { key: 'toolVersion', label: 'Tool version', placeholder: 'any' },
  { key: 'agent', label: 'Agent', placeholder: 'demo-agent' },
  { key: 'environment', label: 'Environment', placeholder: 'dev' },
];

/**
 * The filter form of the Invocations page: edits a copy of `value` and hands the whole set to
 * `onApply` on Apply (or Enter); the status and the time range apply as soon as they change.
 */
export function InvocationFilters({
  value,
  onApply,
}: {
  value: Filters;
  onApply: (f: Filters) => void;
}) {
  const [draft, setDraft] = useState<Filters>(value);
  const shown = JSON.stringify(value);
  // The URL changed (a link, back, a reload): the form shows what the list is filtered by.
  useEffect(() => setDraft(value), [shown]);
  const set = (key: FilterKey, v: string | undefined, apply = false) => {
    const next = { ...draft };
    if (v === undefined || v.trim() === '') delete next[key];
    else next[key] = v.trim();
    setDraft(next);
    if (apply) onApply(next);
  };
  return (
    <form
      class="filters"
      aria-label="Filter invocations"
      onSubmit={(e) => {
        e.preventDefault();
        onApply(draft);
      }}
    >
      <label>
        Status
        <select
          value={draft.status ?? ''}
          onChange={(e) => set('status', e.currentTarget.value, true)}
        >
          <option value="">any</option>
          {INVOCATION_STATUSES.map((s) => (
            <option key={s} value={s}>
              {s.replace('_', ' ')}
            </option>
          ))}
        </select>
      </label>
      {TEXT_FIELDS.map((f) => (
        <label key={f.key}>
          {f.label}
          <input
            name={f.key}
            value={draft[f.key] ?? ''}
            onInput={(e) => set(f.key, e.currentTarget.value)}
            placeholder={f.placeholder}
            autoComplete="off"
          />
        </label>
      ))}
      <label>
        From
        <input
          type="datetime-local"
          name="from"
          value={localInput(draft.from)}
          onChange={(e) => set('from', fromLocalInput(e.currentTarget.value), true)}
        />
      </label>
      <label>
        To
        <input
          type="datetime-local"
          name="to"
          value={localInput(draft.to)}
          onChange={(e) => set('to', fromLocalInput(e.currentTarget.value), true)}
        />
      </label>
      <button type="submit">Apply</button>
      <button type="button" class="quiet" onClick={() => onApply({})}>
        Clear
      </button>
    </form>
  );
}
