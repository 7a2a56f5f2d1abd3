import { api } from '../api.js';
import { Busy, ErrorNote, Field } from '../components/bits.js';
import { useResource } from '../use-resource.js';

interface Checkpoint {
  tenant: string;
  treeSize: number;
  rootHash: string;
  timestamp: string;
  keyid: string;
}

const EVENTS = [
  'ToolInvocationCompleted',
  'ApprovalDecided',
  'ToolEffectResolved',
  'ToolEffectUncertain',
];

/** The tenant's audit log: its current signed checkpoint. */
export function AuditView() {
  const cp = useResource(() => api<Checkpoint>('GET', '/v1/audit/checkpoint'), [], EVENTS);
  return (
    <section aria-labelledby="audit-title">
      <h1 id="audit-title">Audit log</h1>
      <ErrorNote message={cp.error} />
      {cp.value === undefined && cp.loading ? <Busy label="Loading the checkpoint…" /> : null}
      {cp.value ? (
        <dl class="facts">
          <Field name="Tenant">{cp.value.tenant}</Field>
          <Field name="Tree size">
            <span data-testid="tree-size">{cp.value.treeSize}</span> records
          </Field>
          <Field name="Root hash">
            <code class="hash">{cp.value.rootHash}</code>
          </Field>
          <Field name="Signed">
            <time dateTime={cp.value.timestamp}>{cp.value.timestamp}</time> by key{' '}
            <code>{cp.value.keyid}</code>
          </Field>
        </dl>
      ) : null}
      <p class="subtle">
        Each invocation's page verifies its receipt and the inclusion of its record in this tree.
        Offline: <code>gatehouse audit verify</code>.
      </p>
    </section>
  );
}
