import { canonicalJson } from '../../core/index.js';
import type {
  AuditRecord,
  AuditRecordDraft,
  EventType,
  OutboxEvent,
  StoredEvent,
} from '../../core/index.js';
import { leafHash } from '../../audit/index.js';
import type { Checkpoint, StoredAuditRecord } from '../../audit/index.js';
import type { Tables } from '../schema/tables.js';

/**
 * The row of audit record `draft` at `index` of its tenant's log (its JCS bytes are the Merkle
 * leaf), and its leaf hash.
 */
export function auditRow(
  draft: AuditRecordDraft,
  index: number,
): { row: Tables['audit_records']; leaf: Buffer } {
  const record: AuditRecord = { ...draft, index };
  // The text is stored, its UTF-8 bytes are hashed: one canonicalization, one encoding.
  const text = canonicalJson(record);
  const leaf = leafHash(Buffer.from(text, 'utf8'));
  return {
    row: {
      tenant: draft.tenant,
      idx: index,
      record: text,
      leaf_hash: leaf.toString('base64'),
    },
    leaf,
  };
}

/** A stored audit record from its row. */
export function toStoredAuditRecord(r: Tables['audit_records']): StoredAuditRecord {
  return { tenant: r.tenant, index: Number(r.idx), record: r.record, leafHash: r.leaf_hash };
}

/** The outbox row of an event (its sequence number is the database's). */
export function outboxRow(e: OutboxEvent): Omit<Tables['outbox'], 'seq'> {
  return {
    tenant: e.tenant,
    type: e.type,
    subject: e.subject,
    at: e.at,
    data: JSON.stringify(e.data),
    owner: e.owner ?? null,
  };
}

/** A stored event from its outbox row. */
export function toStoredEvent(r: {
  seq: number | bigint;
  tenant: string;
  type: string;
  subject: string;
  at: string;
  data: string;
  owner: string | null;
}): StoredEvent {
  return {
    seq: Number(r.seq),
    type: r.type as EventType,
    tenant: r.tenant,
    subject: r.subject,
    at: r.at,
    data: JSON.parse(r.data) as Record<string, unknown>,
    ...(r.owner !== null ? { owner: r.owner } : {}),
  };
}

/** The row of a signed checkpoint. */
export function checkpointRow(cp: Checkpoint): Tables['checkpoints'] {
  return {
    tenant: cp.tenant,
    tree_size: cp.treeSize,
    root_hash: cp.rootHash,
    timestamp: cp.timestamp,
    keyid: cp.keyid,
    signature: cp.signature,
  };
}

/** A checkpoint from its row. */
export function toCheckpoint(r: Tables['checkpoints']): Checkpoint {
  return {
    tenant: r.tenant,
    treeSize: Number(r.tree_size),
    rootHash: r.root_hash,
    timestamp: r.timestamp,
    keyid: r.keyid,
    signature: r.signature,
  };
}

/** `max(...)` of an empty set plus one as a size: 0 when there is no row. */
export function sizeAfter(top: number | string | bigint | null | undefined): number {
  return top === null || top === undefined ? 0 : Number(top) + 1;
}
