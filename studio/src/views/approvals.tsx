import { api } from '../api.js';
import { Busy, Empty, ErrorNote } from '../components/bits.js';
import { useServerNow } from '../server-clock.js';
import type { Approval } from '../types.js';
import { useResource } from '../use-resource.js';
import { ApprovalCard } from './approval-card.js';

const EVENTS = ['ApprovalRequested', 'ApprovalDecided', 'ToolInvocationCompleted'];

/** How many decided approvals the history shows. */
const HISTORY = 25;

/** The approval inbox: pending requests first (oldest first), then recent decisions. */
export function ApprovalsView() {
  const now = useServerNow();
  const all = useResource(
    async () => (await api<{ approvals: Approval[] }>('GET', '/v1/approvals')).approvals,
    [],
    EVENTS,
  );
  const list = all.value ?? [];
  const pending = list
    .filter((a) => a.status === 'pending')
    .sort((a, b) => a.requestedAt.localeCompare(b.requestedAt));
  const decided = list.filter((a) => a.status !== 'pending').slice(0, HISTORY);
  return (
    <section aria-labelledby="approvals-title">
      <h1 id="approvals-title">
        Approvals <span class="subtle">({pending.length} waiting)</span>
      </h1>
      <ErrorNote message={all.error} />
      {all.value === undefined && all.loading ? <Busy label="Loading approvals…" /> : null}
      {all.value !== undefined && pending.length === 0 ? (
        <Empty>No approvals waiting.</Empty>
      ) : null}
      <ul class="cards" aria-label="Pending approvals">
        {pending.map((a) => (
          <li key={a.id}>
            <ApprovalCard approval={a} now={now} onDecided={all.reload} />
          </li>
        ))}
      </ul>
      {decided.length > 0 ? (
        <>
          <h2>Recently decided</h2>
          <ul class="cards" aria-label="Decided approvals">
            {decided.map((a) => (
              <li key={a.id}>
                <ApprovalCard approval={a} now={now} onDecided={all.reload} />
              </li>
            ))}
          </ul>
        </>
      ) : null}
    </section>
  );
}
