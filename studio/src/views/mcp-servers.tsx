import { may } from '../access.js';
import { api } from '../api.js';
import { Busy, Empty, ErrorNote, StatusBadge } from '../components/bits.js';
import { MCP_EVENTS } from '../mcp-types.js';
import type { McpServer, McpTransport } from '../mcp-types.js';
import { useRoles } from '../roles.js';
import { useResource } from '../use-resource.js';
import { RegisterServer } from './mcp-register.js';

/** How a server is reached, in one line: its command line, or its URL. */
export function transportText(t: McpTransport): string {
  return t.type === 'stdio' ? [t.command, ...t.args].join(' ') : t.url;
}

/** Upstream MCP servers: each with its state and health; admins register new ones here. */
export function McpServersView() {
  const roles = useRoles();
  const list = useResource(
    async () => (await api<{ servers: McpServer[] }>('GET', '/v1/mcp-servers')).servers,
    [],
    MCP_EVENTS,
  );
  const servers = list.value ?? [];
  return (
    <section aria-labelledby="mcp-title">
      <h1 id="mcp-title">MCP servers</h1>
      <p class="subtle">
        Upstream servers whose tools agents call through Gatehouse. A tool is callable only while
        its server is active and it is bound with the digest a maintainer approved.
      </p>
      <ErrorNote message={list.error} />
      {list.value === undefined && list.loading ? <Busy label="Loading MCP servers…" /> : null}
      {list.value?.length === 0 ? <Empty>No MCP servers registered.</Empty> : null}
      {servers.length > 0 ? (
        <table>
          <caption class="subtle">{servers.length} servers</caption>
          <thead>
            <tr>
              <th scope="col">Server</th>
              <th scope="col">State</th>
              <th scope="col">Health</th>
              <th scope="col">Transport</th>
            </tr>
          </thead>
          <tbody>
            {servers.map((s) => (
              <tr key={s.id}>
                <td>
                  <a href={`/studio/mcp/${encodeURIComponent(s.id)}`}>{s.name}</a>
                  <br />
                  <code class="subtle">{s.id}</code>
                </td>
                <td>
                  <StatusBadge status={s.state} />
                </td>
                <td>{health(s)}</td>
                <td>
                  <code>{transportText(s.transport)}</code>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      ) : null}
      {may(roles, 'POST /v1/mcp-servers') ? <RegisterServer onRegistered={list.reload} /> : null}
    </section>
  );
}

/** What the health probe last found, in words. */
export function health(s: McpServer): string {
  switch (s.state) {
    case 'active':
      return 'healthy: answering its probe';
    case 'degraded':
      return `unhealthy: ${s.stateReason ?? 'its probe failed'}`;
    case 'retired':
      return `retired: ${s.stateReason ?? 'no reason given'}`;
    default:
      return 'not probed until active';
  }
}
