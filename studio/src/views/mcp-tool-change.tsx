import { useState } from 'preact/hooks';
import { may } from '../access.js';
import { api } from '../api.js';
import { DiffView } from '../components/bits.js';
import { diffText, lineDiff } from '../line-diff.js';
import type { McpBinding } from '../mcp-types.js';
import { useRoles } from '../roles.js';
import { ActionForm } from './action-form.js';

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
  const titleId = `change-${b.tool}`;
  const reapprove = async () => {
    const r = await api<{ binding: McpBinding }>(
      'POST',
      `/v1/mcp-servers/${encodeURIComponent(b.serverId)}/bindings/${encodeURIComponent(b.tool)}/reapprove`,
      schemaChanged ? { version: version.trim() } : {},
    );
    props.onReapproved();
    return `Re-approved: ${b.tool} is ${r.binding.state} as ${r.binding.descriptor.id}@${r.binding.descriptor.version}.`;
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
        <ActionForm
          class="decide"
          action="Re-approve as listed now"
          busyAction="Re-approving…"
          act={reapprove}
        >
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
        </ActionForm>
      ) : (
        <p class="subtle">A maintainer re-approves changed tools.</p>
      )}
    </article>
  );
}
