import { useState } from 'preact/hooks';
import { api, messageOf } from '../api.js';
import { DiffView, ErrorNote, Field, JsonView, StatusBadge, When } from '../components/bits.js';
import type { Approval } from '../types.js';

/** What a reviewer sees a status as: an invalidated approval is stale (its request changed). */
function shownStatus(a: Approval): string {
  return a.status === 'invalidated' ? 'stale' : a.status;
}

/** The input as a reviewer reads it: a change proposal's diff as a diff, the rest as JSON. */
function InputView({ input }: { input: unknown }) {
  if (
    typeof input === 'object' &&
    input !== null &&
    typeof (input as { diff?: unknown }).diff === 'string'
  ) {
    const { diff, ...rest } = input as { diff: string };
    return (
      <>
        <JsonView value={rest} label="Input (without the diff)" />
        <DiffView diff={diff} label="Proposed change" />
      </>
    );
  }
  return <JsonView value={input} label="Input" />;
}

/**
 * One approval request: exactly what would run (tool version, class, input, request hash), why it
 * needs approval, who asked, when it expires, the quorum, and — while pending — approve or reject
 * with a reason. The decision names the request hash shown, so it can never apply to another.
 */
export function ApprovalCard(props: { approval: Approval; now: number; onDecided: () => void }) {
  const a = props.approval;
  const [reason, setReason] = useState('');
  const [busy, setBusy] = useState<'approve' | 'reject' | null>(null);
  const [error, setError] = useState<string | null>(null);
  const approvals = a.decisions.filter((d) => d.decision === 'approve');
  const titleId = `approval-${a.id}`;
  const decide = async (decision: 'approve' | 'reject') => {
    if (decision === 'reject' && reason.trim() === '') {
      setError('Say why you reject it: the agent and its owner need a reason they can act on.');
      return;
    }
    setBusy(decision);
    setError(null);
    try {
      await api('POST', `/v1/approvals/${encodeURIComponent(a.id)}/${decision}`, {
        reason,
        requestHash: a.requestHash,
      });
      props.onDecided();
    } catch (e) {
      setError(messageOf(e));
    } finally {
      setBusy(null);
    }
  };
  return (
    <article class={`card approval status-${a.status}`} aria-labelledby={titleId}>
      <header>
        <h3 id={titleId}>
          {a.tool.id}@{a.tool.version}
        </h3>
        <StatusBadge status={shownStatus(a)} />
        <span class={`class class-${a.effectiveClass}`}>{a.effectiveClass}</span>
      </header>
      <p class="why">{a.reason}</p>
      <dl class="facts">
        <Field name="Environment">
          {a.project}/{a.environment} ({a.environmentClass})
        </Field>
        <Field name="Request hash">
          <code class="hash" data-testid="request-hash">
            {a.requestHash}
          </code>
        </Field>
        <Field name="Requested by">
          <code>{a.requestedBy}</code>, <When at={a.requestedAt} now={props.now} past />
        </Field>
        <Field name={a.status === 'pending' ? 'Expires' : 'Expiry'}>
          <When at={a.expiresAt} now={props.now} />
        </Field>
        <Field name="Quorum">
          {approvals.length} of {a.quorum} approval{a.quorum === 1 ? '' : 's'}
          {a.decisions.length > 0 ? (
            <ul class="decisions">
              {a.decisions.map((d) => (
                <li key={`${d.principal}-${d.at}`}>
                  <code>{d.principal}</code> {d.decision === 'approve' ? 'approved' : 'rejected'}{' '}
                  <When at={d.at} now={props.now} past />
                  {d.reason ? `: “${d.reason}”` : ''}
                </li>
              ))}
            </ul>
          ) : null}
        </Field>
        {a.statusReason ? <Field name="Why">{a.statusReason}</Field> : null}
        <Field name="Invocation">
          <a href={`/studio/invocations/${encodeURIComponent(a.invocationId)}`}>{a.invocationId}</a>
        </Field>
      </dl>
      <InputView input={a.input} />
      {a.status === 'pending' ? (
        <form class="decide" onSubmit={(e) => e.preventDefault()}>
          <label for={`reason-${a.id}`}>Reason (required to reject)</label>
          <textarea
            id={`reason-${a.id}`}
            rows={2}
            maxLength={2000}
            value={reason}
            onInput={(e) => setReason(e.currentTarget.value)}
          />
          <div class="actions">
            <button
              type="button"
              class="approve"
              disabled={busy !== null}
              aria-busy={busy === 'approve'}
              onClick={() => void decide('approve')}
            >
              {busy === 'approve' ? 'Approving…' : 'Approve'}
            </button>
            <button
              type="button"
              class="reject"
              disabled={busy !== null}
              aria-busy={busy === 'reject'}
              onClick={() => void decide('reject')}
            >
              {busy === 'reject' ? 'Rejecting…' : 'Reject'}
            </button>
          </div>
          <ErrorNote message={error} />
        </form>
      ) : null}
    </article>
  );
}
