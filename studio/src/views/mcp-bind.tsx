import { useState } from 'preact/hooks';
import { api } from '../api.js';
import type { McpBinding, UpstreamTool } from '../mcp-types.js';
import { ActionForm } from './action-form.js';

/** The side-effect classes a tool may be bound with, lowest first. */
const CLASSES = ['read', 'workspace-write', 'shared-write', 'production'] as const;

/** A descriptor id for an upstream tool: `SERVER/TOOL`, lower case, other characters as `-`. */
export function suggestedDescriptorId(server: string, tool: string): string {
  const part = (s: string) =>
    s
      .toLowerCase()
      .replace(/[^a-z0-9._-]+/g, '-')
      .replace(/^-+|-+$/g, '') || 'tool';
  return `${part(server)}/${part(tool)}`;
}

/**
 * The class a maintainer starts from: `read` when the upstream says the tool only reads
 * (`readOnlyHint`), else `shared-write`, the cautious guess for a tool that reaches a system
 * others use. The maintainer decides; the gateway takes what is sent.
 */
function suggestedClass(tool: UpstreamTool): (typeof CLASSES)[number] {
  return tool.annotations?.readOnlyHint === true ? 'read' : 'shared-write';
}

/**
 * A maintainer's form to bind a discovered tool that has no binding yet: the descriptor id and
 * version to publish it as and its side-effect class; `POST /v1/mcp-servers/:id/bindings` binds it
 * and publishes the descriptor, after which agents whose release pins it may call it.
 */
export function McpBindForm(props: {
  serverId: string;
  serverName: string;
  tool: UpstreamTool;
  onBound: () => void;
}) {
  const { tool } = props;
  const [id, setId] = useState(suggestedDescriptorId(props.serverName, tool.name));
  const [version, setVersion] = useState('1.0.0');
  const [cls, setCls] = useState<string>(suggestedClass(tool));
  const key = `bind-${tool.name}`;
  const bind = async () => {
    const r = await api<{ binding: McpBinding }>(
      'POST',
      `/v1/mcp-servers/${encodeURIComponent(props.serverId)}/bindings`,
      { tool: tool.name, class: cls, descriptor: { id: id.trim(), version: version.trim() } },
    );
    props.onBound();
    return `Bound and published: ${r.binding.descriptor.id}@${r.binding.descriptor.version} (${r.binding.class}).`;
  };
  return (
    <details class="bind">
      <summary>Bind and publish…</summary>
      <ActionForm
        label={`Bind ${tool.name}`}
        action="Bind and publish"
        busyAction="Binding…"
        act={bind}
      >
        <label for={`${key}-id`}>Descriptor id</label>
        <input id={`${key}-id`} value={id} onInput={(e) => setId(e.currentTarget.value)} />
        <label for={`${key}-version`}>Version</label>
        <input
          id={`${key}-version`}
          value={version}
          onInput={(e) => setVersion(e.currentTarget.value)}
        />
        <label for={`${key}-class`}>Side-effect class</label>
        <select id={`${key}-class`} value={cls} onChange={(e) => setCls(e.currentTarget.value)}>
          {CLASSES.map((c) => (
            <option key={c} value={c}>
              {c}
            </option>
          ))}
        </select>
      </ActionForm>
    </details>
  );
}
