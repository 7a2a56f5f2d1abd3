import { useCallback, useEffect, useState } from 'preact/hooks';
import type { EventType } from '../../../src/core/events.js';
import { api, messageOf } from '../api.js';
import { Busy, ErrorNote, Field, JsonView, StatusBadge } from '../components/bits.js';
import { DECIDED_STATUSES } from '../invocation-states.js';
import type { Invocation } from '../types.js';
import { useResource } from '../use-resource.js';
import { verifyReceipt } from '../verify/verify-receipt.js';
import type { ReceiptVerdict } from '../verify/verify-receipt.js';
import { Timeline } from './timeline.js';

const EVENTS: EventType[] = [
  'ToolInvocationCompleted',
  'ApprovalDecided',
  'ToolEffectUncertain',
  'ToolEffectResolved',
];
const DECIDED = new Set(DECIDED_STATUSES);

/** One invocation: timeline, output, redactions, lease, egress, and its receipt verified here. */
export function InvocationView({ id }: { id: string }) {
  const inv = useResource(
    () => api<Invocation>('GET', `/v1/invocations/${encodeURIComponent(id)}`),
    [id],
    EVENTS,
  );
  const i = inv.value;
  return (
    <section aria-labelledby="invocation-title">
      <p>
        <a href="/studio/invocations">← Invocations</a>
      </p>
      <ErrorNote message={inv.error} />
      {i === undefined && inv.loading ? <Busy label="Loading the invocation…" /> : null}
      {i ? (
        <>
          <h1 id="invocation-title">
            {i.tool.id}@{i.tool.version} <StatusBadge status={i.status} />
          </h1>
          <dl class="facts">
            <Field name="Invocation">
              <code>{i.id}</code>
            </Field>
            <Field name="Agent">
              {i.agent.id}@{i.agent.version}
            </Field>
            <Field name="Environment">
              {i.project}/{i.environment}
            </Field>
            <Field name="Effective class">{i.effectiveClass ?? 'not classified'}</Field>
            <Field name="Request hash">
              <code class="hash">{i.requestHash}</code>
            </Field>
            {i.approval ? (
              <Field name="Approval">
                {i.approval.id}, by {i.approval.approvers.map((a) => a.principal).join(', ')}
              </Field>
            ) : null}
            {i.resolution ? (
              <Field name="Resolution">
                {i.resolution.effect} by {i.resolution.by}: {JSON.stringify(i.resolution.evidence)}
              </Field>
            ) : null}
            {i.error ? (
              <Field name="Error">
                {i.error.code}: {i.error.message}
              </Field>
            ) : null}
          </dl>
          <h2>Stage timeline</h2>
          <Timeline trace={i.trace} start={i.createdAt} />
          <h2>Input</h2>
          <JsonView value={i.input} label="Input" />
          {'output' in i ? (
            <>
              <h2>Output</h2>
              <JsonView value={i.output} label="Output" />
              {i.outputInfo?.artifact ? (
                <p>
                  Cut at {i.outputInfo.bytes} bytes; the whole is artifact{' '}
                  <code>{i.outputInfo.artifact}</code>.
                </p>
              ) : null}
            </>
          ) : null}
          <h2>Redactions</h2>
          {i.redactions.length === 0 ? (
            <p class="subtle">Nothing was redacted.</p>
          ) : (
            <ul>
              {i.redactions.map((r) => (
                <li key={`${r.kind}-${r.encoding ?? ''}`}>
                  {r.kind}
                  {r.encoding ? ` (${r.encoding})` : ''}: {r.count}
                </li>
              ))}
            </ul>
          )}
          <h2>Lease and egress</h2>
          {i.lease ? (
            <JsonView value={i.lease} label="Lease" />
          ) : (
            <p class="subtle">No lease: nothing ran in a sandbox.</p>
          )}
          {i.egress.length > 0 ? (
            <table>
              <thead>
                <tr>
                  <th scope="col">Verdict</th>
                  <th scope="col">Destination</th>
                  <th scope="col">Reason</th>
                </tr>
              </thead>
              <tbody>
                {i.egress.map((e, n) => (
                  <tr key={n}>
                    <td>{e.allowed ? 'allowed' : 'refused'}</td>
                    <td>
                      {e.method} {e.host}:{e.port}
                    </td>
                    <td>{e.reason}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          ) : (
            <p class="subtle">No egress attempts.</p>
          )}
          <h2>Receipt</h2>
          {DECIDED.has(i.status) ? (
            <ReceiptPanel id={i.id} />
          ) : (
            <p class="subtle">No receipt until the outcome is decided.</p>
          )}
        </>
      ) : null}
    </section>
  );
}

/** Verifies the receipt in this browser and shows each check. */
function ReceiptPanel({ id }: { id: string }) {
  const [verdict, setVerdict] = useState<ReceiptVerdict | null>(null);
  const [error, setError] = useState<string | null>(null);
  const run = useCallback(() => {
    setVerdict(null);
    verifyReceipt(id).then(setVerdict, (e: unknown) => setError(messageOf(e)));
  }, [id]);
  useEffect(run, [run]);
  return (
    <div class="receipt" aria-live="polite">
      <ErrorNote message={error} />
      {verdict === null ? (
        <Busy label="Verifying the receipt in your browser…" />
      ) : (
        <>
          <p data-testid="receipt-verdict">
            <StatusBadge status={verdict.ok ? 'verified' : 'not-verified'} />{' '}
            {verdict.ok ? 'Receipt verified in this browser.' : 'Receipt NOT verified.'}
          </p>
          <ul class="checks">
            {verdict.checks.map((c) => (
              <li key={c.name} class={c.ok ? 'ok' : 'fail'}>
                <strong>{c.name}</strong>: {c.detail}
              </li>
            ))}
          </ul>
          <button type="button" onClick={run}>
            Verify again
          </button>
        </>
      )}
    </div>
  );
}
