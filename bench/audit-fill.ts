/** Fills a tenant's audit log with realistic records, fast: big batches through the real store. */
import type { Gateway } from '../src/app/index.js';
import type { AuditRecordDraft } from '../src/core/index.js';
import type { Principal } from '../src/tenancy/index.js';
import { SqliteAuditStore } from '../src/storage/index.js';

/** What one governed call writes to its tenant's audit log. */
export interface CallRecords {
  /** Records one call appends (the mean over the calls made). */
  perCall: number;
  /** The records of the last call, as drafts (without their index). */
  drafts: AuditRecordDraft[];
  /** Their JCS bytes in the log, summed. */
  bytes: number;
  /** The invocation id the drafts mention, so copies can name their own. */
  invocationId: string;
}

/** Makes `calls` governed demo/echo calls and reads back what each appended to the audit log. */
export async function echoCallRecords(
  g: Gateway,
  principal: Principal,
  calls: number,
): Promise<CallRecords> {
  const store = new SqliteAuditStore(g.db);
  const before = await store.size(principal.tenant);
  let last = { from: before, to: before, id: '' };
  for (let i = 0; i < calls; i++) {
    const from = await store.size(principal.tenant);
    const record = await g.invocations.invoke(principal, {
      tool: { id: 'demo/echo', version: '1.0.0' },
      input: { message: 'hello' },
      environment: 'dev',
      idempotencyKey: `audit-scale-${Date.now()}-${i}`,
    });
    if (record.status !== 'observed') throw new Error(`demo/echo ended ${record.status}`);
    last = { from, to: await store.size(principal.tenant), id: record.id };
  }
  const after = await store.size(principal.tenant);
  const rows = await store.records(principal.tenant, last.from, last.to);
  const drafts = rows.map((r) => {
    const { index: _index, ...draft } = JSON.parse(r.record) as AuditRecordDraft & {
      index: number;
    };
    return draft;
  });
  return {
    perCall: (after - before) / calls,
    drafts,
    bytes: rows.reduce((sum, r) => sum + Buffer.byteLength(r.record, 'utf8'), 0),
    invocationId: last.id,
  };
}

/**
 * Copies of one call's records for call number `n`: the invocation id replaced by another of the
 * same length wherever it appears, so every copy is distinct and as long as the original. Only the
 * objects on the way to an id are copied; the rest is shared (the store only reads drafts).
 */
export function callCopy(call: CallRecords, n: number): AuditRecordDraft[] {
  const id = call.invocationId;
  const suffix = n.toString(16).padStart(12, '0');
  const copyId = `${id.slice(0, id.length - suffix.length)}${suffix}`;
  return call.drafts.map((d) => replaceIn(d, id, copyId) as AuditRecordDraft);
}

/** `value` with `from` replaced by `to` in every string, sharing what holds no `from`. */
function replaceIn(value: unknown, from: string, to: string): unknown {
  if (typeof value === 'string') return value.includes(from) ? value.split(from).join(to) : value;
  if (typeof value !== 'object' || value === null) return value;
  let changed = false;
  const entries = Object.entries(value).map(([k, v]) => {
    const r = replaceIn(v, from, to);
    if (r !== v) changed = true;
    return [k, r] as const;
  });
  if (!changed) return value;
  return Array.isArray(value) ? entries.map(([, v]) => v) : Object.fromEntries(entries);
}

/**
 * Appends copies of `call` to its tenant's log until it holds `target` records, `batch` records
 * per transaction, through the gateway's own audit store. Resolves with the records appended.
 */
export async function fillLog(
  g: Gateway,
  tenant: string,
  call: CallRecords,
  target: number,
  batch: number,
): Promise<number> {
  const store = new SqliteAuditStore(g.db);
  let size = await store.size(tenant);
  const start = size;
  let n = 0;
  while (size < target) {
    const drafts: AuditRecordDraft[] = [];
    while (drafts.length < batch && size + drafts.length < target) {
      drafts.push(...callCopy(call, n++).slice(0, target - size - drafts.length));
    }
    await store.append(drafts);
    size += drafts.length;
  }
  return size - start;
}
