import { useLocation } from 'preact-iso';
import type { EventType } from '../../../src/core/events.js';
import { api } from '../api.js';
import { Busy, Empty, ErrorNote, StatusBadge } from '../components/bits.js';
import { filtersOf, listPath, pagePath } from '../invocation-filter-state.js';
import type { Invocation } from '../types.js';
import { useResource } from '../use-resource.js';
import { InvocationFilters } from './invocation-filters.js';

const EVENTS: EventType[] = [
  'ToolInvocationRequested',
  'ToolInvocationDenied',
  'ToolInvocationCompleted',
  'ApprovalDecided',
  'ToolEffectUncertain',
  'ToolEffectResolved',
];
/** How many invocations one page shows. */
const PAGE = 100;

/**
 * Invocations, newest first, filtered by the API (status, tool, agent, environment, time) as the
 * page's URL says, a page at a time (the URL's `cursor`).
 */
export function InvocationsView() {
  const { query, route } = useLocation();
  const filters = filtersOf(query);
  const cursor = query.cursor || undefined;
  const path = listPath(filters, PAGE, cursor);
  const list = useResource(
    async () => ({
      path,
      ...(await api<{ invocations: Invocation[]; nextCursor: string | null }>('GET', path)),
    }),
    [path],
    EVENTS,
  );
  // Rows of other filters never stand for these (while they load, or when they were refused).
  const current = list.value?.path === path ? list.value : undefined;
  const rows = current?.invocations ?? [];
  const filtered = Object.keys(filters).length > 0;
  return (
    <section aria-labelledby="invocations-title">
      <h1 id="invocations-title">Invocations</h1>
      <InvocationFilters value={filters} onApply={(f) => route(pagePath(f))} />
      <ErrorNote message={list.error} />
      {current === undefined && list.loading ? <Busy label="Loading invocations…" /> : null}
      {current !== undefined && rows.length === 0 ? (
        <Empty>{filtered ? 'No invocations match these filters.' : 'No invocations yet.'}</Empty>
      ) : null}
      {rows.length > 0 ? (
        <table>
          <caption class="subtle">
            {rows.length} invocation{rows.length === 1 ? '' : 's'}
            {filtered ? ' matching the filters' : ''}, newest first
            {cursor ? ' (an older page)' : ''}
          </caption>
          <thead>
            <tr>
              <th scope="col">Status</th>
              <th scope="col">Tool</th>
              <th scope="col">Agent</th>
              <th scope="col">Environment</th>
              <th scope="col">Created</th>
            </tr>
          </thead>
          <tbody>
            {rows.map((i) => (
              <tr key={i.id}>
                <td>
                  <StatusBadge status={i.status} />
                </td>
                <td>
                  <a href={`/studio/invocations/${encodeURIComponent(i.id)}`}>
                    {i.tool.id}@{i.tool.version}
                  </a>
                </td>
                <td>
                  {i.agent.id}@{i.agent.version}
                </td>
                <td>{i.environment}</td>
                <td>
                  <time dateTime={i.createdAt}>{new Date(i.createdAt).toLocaleString()}</time>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      ) : null}
      <nav class="pager" aria-label="Pages of invocations">
        {cursor ? <a href={pagePath(filters)}>Newest</a> : null}
        {current?.nextCursor ? (
          <a href={pagePath(filters, current.nextCursor)}>Older invocations</a>
        ) : null}
      </nav>
    </section>
  );
}
