import { useState } from 'preact/hooks';
import type { EventType } from '../../../src/core/events.js';
import { api } from '../api.js';
import { Busy, Empty, ErrorNote, StatusBadge } from '../components/bits.js';
import { INVOCATION_STATUSES } from '../invocation-states.js';
import type { Invocation } from '../types.js';
import { useResource } from '../use-resource.js';

const EVENTS: EventType[] = [
  'ToolInvocationRequested',
  'ToolInvocationDenied',
  'ToolInvocationCompleted',
  'ApprovalDecided',
  'ToolEffectUncertain',
  'ToolEffectResolved',
];
const STATUSES = ['', ...INVOCATION_STATUSES];
/** How many invocations the list reads (the API's largest page). */
const LIMIT = 500;

/** Invocations, newest first, filtered by status (by the API) and tool, agent, environment, time. */
export function InvocationsView() {
  const [status, setStatus] = useState('');
  const [tool, setTool] = useState('');
  const [agent, setAgent] = useState('');
  const [environment, setEnvironment] = useState('');
  const [since, setSince] = useState('');
  const list = useResource(
    async () =>
      (
        await api<{ invocations: Invocation[] }>(
          'GET',
          `/v1/invocations?limit=${LIMIT}${status ? `&status=${status}` : ''}`,
        )
      ).invocations,
    [status],
    EVENTS,
  );
  const sinceMs = since === '' ? 0 : Date.parse(since);
  const shown = (list.value ?? []).filter(
    (i) =>
      (tool === '' || `${i.tool.id}@${i.tool.version}`.includes(tool)) &&
      (agent === '' || `${i.agent.id}@${i.agent.version}`.includes(agent)) &&
      (environment === '' || i.environment === environment) &&
      (sinceMs === 0 || Date.parse(i.createdAt) >= sinceMs),
  );
  const environments = [...new Set((list.value ?? []).map((i) => i.environment))].sort();
  return (
    <section aria-labelledby="invocations-title">
      <h1 id="invocations-title">Invocations</h1>
      <form class="filters" onSubmit={(e) => e.preventDefault()} aria-label="Filter invocations">
        <label>
          Status
          <select value={status} onChange={(e) => setStatus(e.currentTarget.value)}>
            {STATUSES.map((s) => (
              <option key={s} value={s}>
                {s === '' ? 'any' : s.replace('_', ' ')}
              </option>
            ))}
          </select>
        </label>
        <label>
          Tool
          <input
            value={tool}
            onInput={(e) => setTool(e.currentTarget.value)}
            placeholder="demo/echo"
          />
        </label>
        <label>
          Agent
          <input
            value={agent}
            onInput={(e) => setAgent(e.currentTarget.value)}
            placeholder="demo-agent"
          />
        </label>
        <label>
          Environment
          <select value={environment} onChange={(e) => setEnvironment(e.currentTarget.value)}>
            <option value="">any</option>
            {environments.map((e) => (
              <option key={e} value={e}>
                {e}
              </option>
            ))}
          </select>
        </label>
        <label>
          Since
          <input
            type="datetime-local"
            value={since}
            onInput={(e) => setSince(e.currentTarget.value)}
          />
        </label>
      </form>
      <ErrorNote message={list.error} />
      {list.value === undefined && list.loading ? <Busy label="Loading invocations…" /> : null}
      {list.value !== undefined && shown.length === 0 ? <Empty>No invocations match.</Empty> : null}
      {shown.length > 0 ? (
        <table>
          <caption class="subtle">
            {shown.length} of the newest {list.value?.length ?? 0} invocations
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
            {shown.map((i) => (
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
    </section>
  );
}
