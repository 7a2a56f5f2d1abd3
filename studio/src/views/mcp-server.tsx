import { api } from '../api.js';
import { Busy, ErrorNote, Field, StatusBadge } from '../components/bits.js';
import { MCP_EVENTS } from '../mcp-types.js';
import type { McpServerView as View } from '../mcp-types.js';
import { useResource } from '../use-resource.js';
import { ServerActions } from './mcp-actions.js';
import { McpToolChange } from './mcp-tool-change.js';
import { McpToolsTable } from './mcp-tools-table.js';
import { health, transportText } from './mcp-servers.js';

/**
 * One MCP server: its state and health, the lifecycle moves the signed-in roles may make, its
 * discovered tools with their digests and bindings, and each tool the upstream changed since a
 * maintainer approved it, with the diff and a re-approve button; a tool not bound yet can be bound
 * (and its descriptor published) by a maintainer.
 */
export function McpServerView({ id }: { id: string }) {
  const view = useResource(
    () => api<View>('GET', `/v1/mcp-servers/${encodeURIComponent(id)}`),
    [id],
    MCP_EVENTS,
  );
  const v = view.value;
  const changed = (v?.bindings ?? []).filter((b) => b.state === 'unbound' && b.change !== null);
  return (
    <section aria-labelledby="server-title">
      <p>
        <a href="/studio/mcp">← MCP servers</a>
      </p>
      <h1 id="server-title">{v ? `MCP server ${v.server.name}` : 'MCP server'}</h1>
      <ErrorNote message={view.error} />
      {v === undefined && view.loading ? <Busy label="Loading the server…" /> : null}
      {v ? (
        <>
          <dl class="facts">
            <Field name="State">
              <span data-testid="server-state">
                <StatusBadge status={v.server.state} />
              </span>
            </Field>
            <Field name="Health">{health(v.server)}</Field>
            <Field name="Id">
              <code>{v.server.id}</code>
            </Field>
            <Field name="Transport">
              {v.server.transport.type}: <code>{transportText(v.server.transport)}</code>
              {v.server.sandboxed === undefined
                ? null
                : v.server.sandboxed
                  ? ' (sandboxed)'
                  : ' (not sandboxed)'}
            </Field>
            <Field name="Identity">
              <code class="hash">{v.server.identity}</code>
            </Field>
            <Field name="Registered">
              by {v.server.registeredBy},{' '}
              <time dateTime={v.server.createdAt}>
                {new Date(v.server.createdAt).toLocaleString()}
              </time>
            </Field>
            <Field name="Discovered">
              {v.discovery
                ? `${v.discovery.tools.length} tools, ${v.discovery.resources.length} resources, ${v.discovery.prompts.length} prompts`
                : 'not yet: verify the server to discover its tools'}
            </Field>
          </dl>
          <ServerActions server={v.server} onChanged={view.reload} />
          {changed.length > 0 ? (
            <section aria-labelledby="changed-title">
              <h2 id="changed-title">Changed upstream: awaiting re-approval</h2>
              <ul class="cards" aria-label="Changed tools">
                {changed.map((b) => (
                  <li key={b.tool}>
                    <McpToolChange binding={b} onReapproved={view.reload} />
                  </li>
                ))}
              </ul>
            </section>
          ) : null}
          <McpToolsTable view={v} onBound={view.reload} />
        </>
      ) : null}
    </section>
  );
}
