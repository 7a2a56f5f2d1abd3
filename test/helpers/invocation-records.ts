/**
 * Invocation records and their ledger entries as the store tests need them: one full record
 * built in one place, so a field added to {@link InvocationRecord} is added here once.
 */
import { requestHash } from '../../src/core/index.js';
import type { LedgerEntries, SideEffectClass } from '../../src/core/index.js';
import type { InvocationRecord, InvocationStore } from '../../src/invocation/index.js';

/** Second `s` of 2026-01-01, as an ISO time. */
export const at = (s: number): string => new Date(Date.UTC(2026, 0, 1, 0, 0, s)).toISOString();

/**
 * An `observed` read of `demo.echo` by `p-1` in `acme`, numbered `n`: ids and keys sort as they
 * were made, like the UUIDv7 ids the gateway uses.
 */
export const invocationRecord = (
  n: number,
  over: Partial<InvocationRecord> = {},
): InvocationRecord => ({
  id: `0190000${String(n).padStart(5, '0')}`,
  status: 'observed',
  tenant: 'acme',
  project: 'web',
  environment: 'dev',
  principal: 'p-1',
  agent: { id: 'coder', version: '2.0.0' },
  tool: { id: 'demo.echo', version: '1.0.0', descriptorDigest: 'a'.repeat(64) },
  input: { text: 'héllo', n },
  requestHash: 'r'.repeat(64),
  idempotencyKey: `key-${n}`,
  attempt: 1,
  previousAttempt: null,
  effectiveClass: 'read',
  runId: null,
  attemptId: null,
  approvalId: null,
  approval: null,
  resolution: null,
  trace: [{ stage: 'validation', decision: 'pass', reason: 'input matches', at: at(n) }],
  lease: null,
  egress: [],
  redactions: [],
  warnings: [],
  createdAt: at(n),
  updatedAt: at(n),
  completedAt: null,
  audit: null,
  ...over,
});

/** `audits` audit records (`invocation.<status>`) and one ToolInvocationCompleted event of `r`. */
export const ledgerOf = (r: InvocationRecord, audits = 1): LedgerEntries => ({
  audit: Array.from({ length: audits }, (_, i) => ({
    tenant: r.tenant,
    type: `invocation.${r.status}`,
    subject: `invocation/${r.id}`,
    at: r.updatedAt,
    actor: r.principal,
    data: { i },
  })),
  events: [
    {
      type: 'ToolInvocationCompleted',
      tenant: r.tenant,
      subject: `invocation/${r.id}`,
      at: r.updatedAt,
      data: {},
    },
  ],
});

/**
 * Stores call `n` of `demo.write` as a gateway that stopped left it (`running` or `queued`,
 * no trace), on `node` when given; returns its id.
 */
export async function storeLeftCall(
  store: InvocationStore,
  n: number,
  status: InvocationRecord['status'],
  effectiveClass: SideEffectClass,
  options: { at: string; node?: string },
): Promise<string> {
  const record = invocationRecord(n, {
    status,
    tool: { id: 'demo.write', version: '1.0.0', descriptorDigest: 'a'.repeat(64) },
    input: { n },
    effectiveClass,
    trace: [],
    createdAt: options.at,
    updatedAt: options.at,
    ...(options.node === undefined ? {} : { node: options.node }),
  });
  record.requestHash = requestHash(record);
  await store.save({ record, ledger: { ...ledgerOf(record), events: [] } });
  return record.id;
}
