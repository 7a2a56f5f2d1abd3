import { useState } from 'preact/hooks';
import { may } from '../access.js';
import { api } from '../api.js';
import { ErrorNote } from '../components/bits.js';
import type { McpServer } from '../mcp-types.js';
import { useRoles } from '../roles.js';
import { refusal } from './refusal.js';

type Move = 'verify' | 'activate' | 'retire';

const LABEL: Record<Move, string> = {
  verify: 'Verify (handshake and discovery)',
  activate: 'Activate',
  retire: 'Retire',
};

/** The states each move starts from (the server's lifecycle; verify again re-discovers). */
const FROM: Record<Move, readonly McpServer['state'][]> = {
  verify: ['registered', 'verified', 'active', 'degraded'],
  activate: ['verified'],
  retire: ['registered', 'verified', 'active', 'degraded'],
};

/**
 * The lifecycle moves of a server, each shown only to the roles the gateway lets make it and only
 * in a state it starts from. A refusal from the gateway is shown as it says it.
 */
export function ServerActions(props: { server: McpServer; onChanged: () => void }) {
  const roles = useRoles();
  const [busy, setBusy] = useState<Move | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [done, setDone] = useState<string | null>(null);
  const [reason, setReason] = useState('');
  const s = props.server;
  const allowed = (m: Move) =>
    FROM[m].includes(s.state) && may(roles, `POST /v1/mcp-servers/:id/${m}`);
  const run = async (m: Move) => {
    setBusy(m);
    setError(null);
    setDone(null);
    try {
      const body =
        m === 'retire' ? { reason: reason.trim() || 'retired in the Studio' } : undefined;
      const r = await api<{ state?: string; server?: { state: string } }>(
        'POST',
        `/v1/mcp-servers/${encodeURIComponent(s.id)}/${m}`,
        body,
      );
      setDone(`Done: the server is ${r.server?.state ?? r.state ?? 'updated'}.`);
      props.onChanged();
    } catch (e) {
      setError(refusal(e));
    } finally {
      setBusy(null);
    }
  };
  const moves = (['verify', 'activate'] as const).filter(allowed);
  if (moves.length === 0 && !allowed('retire')) return null;
  return (
    <form class="card" aria-label="Server lifecycle" onSubmit={(e) => e.preventDefault()}>
      <div class="actions">
        {moves.map((m) => (
          <button
            key={m}
            type="button"
            disabled={busy !== null}
            aria-busy={busy === m}
            onClick={() => void run(m)}
          >
            {busy === m ? `${LABEL[m]}…` : LABEL[m]}
          </button>
        ))}
      </div>
      {allowed('retire') ? (
        <>
          <label for="retire-reason">Reason to retire (final: its process is stopped)</label>
          <div class="actions">
            <input
              id="retire-reason"
              value={reason}
              maxLength={500}
              onInput={(e) => setReason(e.currentTarget.value)}
            />
            <button
              type="button"
              class="reject"
              disabled={busy !== null}
              aria-busy={busy === 'retire'}
              onClick={() => void run('retire')}
            >
              {busy === 'retire' ? 'Retiring…' : LABEL.retire}
            </button>
          </div>
        </>
      ) : null}
      <ErrorNote message={error} />
      {done ? <p role="status">{done}</p> : null}
    </form>
  );
}
