import { may } from '../access.js';
import { Empty, StatusBadge } from '../components/bits.js';
import type { McpServerView } from '../mcp-types.js';
import { useRoles } from '../roles.js';
import { McpBindForm } from './mcp-bind.js';

/** A digest, short on screen and whole for copy and assistive tech. */
export function Digest({ value }: { value: string }) {
  return (
    <code class="hash" title={value} aria-label={`digest ${value}`}>
      {value.slice(0, 12)}…
    </code>
  );
}

/**
 * A server's discovered tools: each with its digest and its binding, or for one not bound yet, a
 * maintainer's form to bind it and publish its descriptor.
 */
export function McpToolsTable({ view, onBound }: { view: McpServerView; onBound: () => void }) {
  const tools = view.discovery?.tools ?? [];
  const canBind = may(useRoles(), 'POST /v1/mcp-servers/:id/bindings');
  const binding = (name: string) => view.bindings.find((b) => b.tool === name);
  return (
    <section aria-labelledby="tools-title">
      <h2 id="tools-title">Discovered tools</h2>
      {tools.length === 0 ? <Empty>No tools discovered.</Empty> : null}
      {tools.length > 0 ? (
        <table aria-labelledby="tools-title">
          <thead>
            <tr>
              <th scope="col">Tool</th>
              <th scope="col">Digest</th>
              <th scope="col">Binding</th>
              <th scope="col">Description</th>
            </tr>
          </thead>
          <tbody>
            {tools.map(({ tool, digest }) => {
              const b = binding(tool.name);
              return (
                <tr key={tool.name}>
                  <th scope="row">
                    <code>{tool.name}</code>
                    {tool.title ? <div class="subtle">{tool.title}</div> : null}
                  </th>
                  <td>
                    <Digest value={digest} />
                  </td>
                  <td>
                    {b ? (
                      <>
                        <StatusBadge status={b.state} />{' '}
                        <code>
                          {b.descriptor.id}@{b.descriptor.version}
                        </code>{' '}
                        <span class={`class class-${b.class}`}>{b.class}</span>
                        {b.digest !== digest ? (
                          <div class="subtle">
                            approved digest <Digest value={b.digest} />
                          </div>
                        ) : null}
                      </>
                    ) : (
                      <>
                        <span class="subtle">not bound (not callable)</span>
                        {canBind ? (
                          <McpBindForm
                            serverId={view.server.id}
                            serverName={view.server.name}
                            tool={tool}
                            onBound={onBound}
                          />
                        ) : null}
                      </>
                    )}
                  </td>
                  <td>{tool.description ?? ''}</td>
                </tr>
              );
            })}
          </tbody>
        </table>
      ) : null}
    </section>
  );
}
