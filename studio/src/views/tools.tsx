import { api } from '../api.js';
import { Busy, Empty, ErrorNote, StatusBadge } from '../components/bits.js';
import { MCP_EVENTS } from '../mcp-types.js';
import type { AgentReleaseView, ToolVersion } from '../mcp-types.js';
import { TOOL_STATE_MEANING } from '../tool-lifecycle.js';
import { useResource } from '../use-resource.js';
import { AgentReleases } from './agent-releases.js';
import { Digest } from './mcp-tools-table.js';

/**
 * Tools and agent releases: every tool version with its lifecycle state (active, deprecated,
 * revoked), what that state means for calls and why it was set, its class; then the releases.
 */
export function ToolsView() {
  const data = useResource(
    async () => {
      const [tools, releases] = await Promise.all([
        api<{ tools: ToolVersion[] }>('GET', '/v1/tools'),
        api<{ releases: AgentReleaseView[] }>('GET', '/v1/agent-releases'),
      ]);
      return { tools: tools.tools, releases: releases.releases };
    },
    [],
    MCP_EVENTS,
  );
  const tools = [...(data.value?.tools ?? [])].sort(
    (a, b) => a.id.localeCompare(b.id) || a.publishedAt.localeCompare(b.publishedAt),
  );
  return (
    <section aria-labelledby="tools-title">
      <h1 id="tools-title">Tools and agent releases</h1>
      <ErrorNote message={data.error} />
      {data.value === undefined && data.loading ? <Busy label="Loading tools…" /> : null}
      <h2 id="versions-title">Tool versions</h2>
      {data.value !== undefined && tools.length === 0 ? <Empty>No tools published.</Empty> : null}
      {tools.length > 0 ? (
        <table aria-labelledby="versions-title">
          <thead>
            <tr>
              <th scope="col">Tool</th>
              <th scope="col">State</th>
              <th scope="col">Class</th>
              <th scope="col">Kind</th>
              <th scope="col">Digest</th>
              <th scope="col">Published</th>
            </tr>
          </thead>
          <tbody>
            {tools.map((t) => (
              <tr key={`${t.id}@${t.version}`}>
                <th scope="row">
                  <code>
                    {t.id}@{t.version}
                  </code>
                </th>
                <td>
                  <StatusBadge status={t.state} />
                  <div class="subtle">{TOOL_STATE_MEANING[t.state]}</div>
                  {t.stateReason ? (
                    <div>
                      Reason: <q>{t.stateReason}</q>
                    </div>
                  ) : null}
                </td>
                <td>
                  <span class={`class class-${t.class}`}>{t.class}</span>
                </td>
                <td>{t.kind}</td>
                <td>
                  <Digest value={t.digest} />
                </td>
                <td>
                  <time dateTime={t.publishedAt}>{new Date(t.publishedAt).toLocaleString()}</time>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      ) : null}
      {data.value ? <AgentReleases releases={data.value.releases} tools={tools} /> : null}
    </section>
  );
}
