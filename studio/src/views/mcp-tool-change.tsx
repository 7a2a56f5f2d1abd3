import { useState } from 'preact/hooks';
import { may } from '../access.js';
import { api } from '../api.js';
import { DiffView, ErrorNote } from '../components/bits.js';
import { diffText, lineDiff } from '../line-diff.js';
import type { McpBinding } from '../mcp-types.js';
import { useRoles } from '../roles.js';
import { refusal } from './refusal.js';

/**
 * A bound tool the upstream changed: what changed (description, schemas, annotations) as a diff of
 * the approved version against the listed one, and for maintainers a re-approve button. A changed
 * input schema needs a new descriptor version, asked for here.
 */
export function McpToolChange(props: { binding: McpBinding; onReapproved: () => void }) {
  const b = props.binding;
  const roles = useRoles();
  const changes = b.change?.changes ?? [];
  const schemaChanged = changes.some((c) => c.field === 'inputSchema');
  const [version, setVersion] = useState('');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const [done, setDone] = useState<string | null>(null);
  const titleId = `change-${b.tool}`;
  const reapprove = async () => {
    setBusy(true);
    setError(null);
    try {
      const r = await api<{ binding: McpBinding }>(
        'POST',
        `/v1/mcp-servers/${encodeURIComponent(b.serverId)}/bindings/${encodeURIComponent(b.tool)}/reapprove`,
        schemaChanged ? { version: version.trim() } : {},
      );
      setDone(
        `Re-approved: ${b.tool} is ${r.binding.state} as ${r.binding.descriptor.id}@${r.binding.descriptor.version}.`,
      );
      props.onReapproved();
    } catch (e) {
      setError(refusal(e));
    } finally {
      setBusy(false);
    }
  };
  return (
    <article class="card" aria-labelledby={titleId}>
      <header>
        <h3 id={titleId}>{b.tool}</h3>
        <span class="badge badge-unbound">unbound</span>
        <code>
          {b.descriptor.id}@{b.descriptor.version}
        </code>
      </header>
      <p>
        The upstream changed {changes.map((c) => c.field).join(', ')} since {b.boundBy} approved it.
        Calls are refused until a maintainer re-approves what it lists now.
      </p>
      {changes.map((c) => (
        <div key={c.field}>
          <h4>{c.field}</h4>
          <DiffView
            diff={lineDiff(diffText(c.old), diffText(c.new))}
            label={`Change of ${c.field} of ${b.tool}`}
          />
        </div>
      ))}
      {may(roles, 'POST /v1/mcp-servers/:id/bindings/:tool/reapprove') ? (
        <form class="decide" onSubmit={(e) => e.preventDefault()}>
          {schemaChanged ? (
            <>
              <label for={`version-${b.tool}`}>
                New version (the input schema changed; was {b.descriptor.version})
              </label>
              <input
                id={`version-${b.tool}`}
                value={version}
                onInput={(e) => setVersion(e.currentTarget.value)}
              />
            </>
          ) : null}
          <div class="actions">
            <button
              type="button"
              class="approve"
              disabled={busy}
              aria-busy={busy}
              onClick={() => void reapprove()}
            >
              {busy ? 'Re-approving…' : 'Re-approve as listed now'}
            </button>
          </div>
          <ErrorNote message={error} />
          {done ? <p role="status">{done}</p> : null}
        </form>
      ) : (
        <p class="subtle">A maintainer re-approves changed tools.</p>
      )}
    </article>
  );
}
