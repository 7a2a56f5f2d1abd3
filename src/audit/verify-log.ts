import { canonicalJson } from '../core/index.js';
import type { AuditStore } from './audit-store.js';
import { verifyCheckpoint } from './checkpoint.js';
import type { JwkSet } from './jwks.js';
import { leafHash } from './merkle-hash.js';
import { MerkleFrontier } from './merkle-frontier.js';

/** The verdict on one tenant's log. */
export type LogVerification =
  | { ok: true; tenant: string; size: number; rootHash: string; checkpoints: number }
  | { ok: false; tenant: string; index?: number; reason: string };

const CHUNK = 5000;

/**
 * Checks a tenant's audit log offline: every record is canonical JSON whose `index` and `tenant`
 * match its place, its stored leaf hash is the hash of its bytes, and every stored checkpoint is
 * validly signed and matches the root recomputed at its size. Stops at the first fault.
 */
export async function verifyAuditLog(
  store: AuditStore,
  tenant: string,
  jwks: JwkSet,
): Promise<LogVerification> {
  const size = await store.size(tenant);
  const checkpoints = await store.checkpoints(tenant);
  const due = new Map(checkpoints.map((c) => [c.treeSize, c]));
  const frontier = new MerkleFrontier();
  for (const cp of checkpoints) {
    if (!verifyCheckpoint(cp, jwks))
      return {
        ok: false,
        tenant,
        reason: `checkpoint at tree size ${cp.treeSize} has a bad signature or an unknown key ${cp.keyid}`,
      };
    if (cp.treeSize > size)
      return {
        ok: false,
        tenant,
        reason: `checkpoint at tree size ${cp.treeSize} is beyond the log's ${size} records: records were removed`,
      };
  }
  for (let from = 0; from < size; from += CHUNK) {
    const rows = await store.records(tenant, from, Math.min(size, from + CHUNK));
    for (const [i, row] of rows.entries()) {
      const index = from + i;
      const fault = checkRecord(row.record, row.index, index, tenant, row.leafHash);
      if (fault) return { ok: false, tenant, index, reason: fault };
      frontier.append(leafHash(Buffer.from(row.record, 'utf8')));
      const cp = due.get(frontier.size);
      if (cp && cp.rootHash !== frontier.root().toString('base64')) {
        return {
          ok: false,
          tenant,
          index,
          reason: `the root over the first ${cp.treeSize} records differs from the signed checkpoint at that size: a record at or before index ${index} was changed`,
        };
      }
    }
    if (rows.length !== Math.min(size, from + CHUNK) - from)
      return {
        ok: false,
        tenant,
        index: from + rows.length,
        reason: 'records are missing from the log',
      };
  }
  return {
    ok: true,
    tenant,
    size,
    rootHash: frontier.root().toString('base64'),
    checkpoints: checkpoints.length,
  };
}

function checkRecord(
  text: string,
  storedIndex: number,
  index: number,
  tenant: string,
  storedLeaf: string,
): string | null {
  if (storedIndex !== index)
    return `record is stored at index ${storedIndex} where ${index} was expected: the log has a gap`;
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return 'record is not valid JSON: it was altered';
  }
  if (canonicalJson(parsed) !== text) return 'record is not in canonical JSON form: it was altered';
  const r = parsed as { index?: unknown; tenant?: unknown };
  if (r.index !== index) return `record says index ${String(r.index)}: it was altered or moved`;
  if (r.tenant !== tenant) return `record says tenant ${String(r.tenant)}: it was altered or moved`;
  if (leafHash(Buffer.from(text, 'utf8')).toString('base64') !== storedLeaf)
    return 'record bytes do not match the leaf hash written with them: it was altered';
  return null;
}
