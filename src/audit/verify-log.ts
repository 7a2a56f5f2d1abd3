import { canonicalJson } from '../core/index.js';
import type { AuditStore, StoredAuditRecord } from './audit-store.js';
import { verifyCheckpoint } from './checkpoint.js';
import type { Checkpoint } from './checkpoint.js';
import type { JwkSet } from './jwks.js';
import { emptyRoot, leafHash } from './merkle-hash.js';
import { MerkleFrontier } from './merkle-frontier.js';
import { appendSiblings } from './merkle-subtree.js';
import type { SubtreeRef } from './merkle-subtree.js';

/** The verdict on one tenant's log. */
export type LogVerification =
  | { ok: true; tenant: string; size: number; rootHash: string; checkpoints: number }
  | { ok: false; tenant: string; index?: number; reason: string };

const CHUNK = 5000;

/**
 * Checks a tenant's audit log offline: every record is canonical JSON whose `index` and `tenant`
 * match its place, its stored leaf hash is the hash of its bytes, every stored subtree hash
 * (what proofs and checkpoints are served from) is the one recomputed from the records, and every
 * stored checkpoint is validly signed and matches the root recomputed at its size. Stops at the
 * first fault. Streams the log in chunks (records, subtrees and checkpoints alike), so its
 * memory does not grow with the log.
 */
export async function verifyAuditLog(
  store: AuditStore,
  tenant: string,
  jwks: JwkSet,
): Promise<LogVerification> {
  const size = await store.size(tenant);
  let checkpoints = 0;
  const early = await store.checkpoints(tenant, { from: 0, to: 1 });
  for (const cp of early) {
    const fault = checkSignature(cp, jwks);
    if (fault) return { ok: false, tenant, reason: fault };
    if (cp.rootHash !== emptyRoot().toString('base64'))
      return {
        ok: false,
        tenant,
        reason: 'the checkpoint of the empty log has a root other than the empty root',
      };
  }
  checkpoints += early.length;
  const beyond = await store.checkpoints(tenant, { from: size + 1, to: Number.MAX_SAFE_INTEGER });
  for (const cp of beyond) {
    const fault =
      checkSignature(cp, jwks) ??
      `checkpoint at tree size ${cp.treeSize} is beyond the log's ${size} records: records were removed`;
    return { ok: false, tenant, reason: fault };
  }
  const frontier = new MerkleFrontier();
  for (let from = 0; from < size; from += CHUNK) {
    const to = Math.min(size, from + CHUNK);
    const due = new Map<number, Checkpoint>();
    for (const cp of await store.checkpoints(tenant, { from: from + 1, to: to + 1 })) {
      const fault = checkSignature(cp, jwks);
      if (fault) return { ok: false, tenant, reason: fault };
      due.set(cp.treeSize, cp);
    }
    checkpoints += due.size;
    const rows = await store.records(tenant, from, to);
    const subtrees = await storedSubtrees(store, tenant, from, from + rows.length);
    for (const [i, row] of rows.entries()) {
      const index = from + i;
      const leaf = leafHash(Buffer.from(row.record, 'utf8'));
      const fault = checkRecord(row, index, tenant, leaf);
      if (fault) return { ok: false, tenant, index, reason: fault };
      for (const node of frontier.append(leaf)) {
        const stored = subtrees.get(`${node.level}/${node.index}`);
        if (!stored?.equals(node.hash)) {
          const first = node.index * 2 ** node.level;
          return {
            ok: false,
            tenant,
            index,
            reason: `the stored hash of the subtree over records ${first}..${index} ${stored ? 'differs from the one recomputed from them' : 'is missing'}: a record in it was changed, or the subtree was; proofs and checkpoints are served from it`,
          };
        }
      }
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
    if (rows.length !== to - from)
      return {
        ok: false,
        tenant,
        index: from + rows.length,
        reason: 'records are missing from the log',
      };
  }
  return { ok: true, tenant, size, rootHash: frontier.root().toString('base64'), checkpoints };
}

/** The stored hashes of the subtrees that leaves `from` ≤ i < `to` complete, by `level/index`. */
async function storedSubtrees(
  store: AuditStore,
  tenant: string,
  from: number,
  to: number,
): Promise<Map<string, Buffer>> {
  const refs: SubtreeRef[] = [];
  for (let i = from; i < to; i++) {
    for (const sibling of appendSiblings(i)) {
      refs.push({ level: sibling.level + 1, index: Math.floor(sibling.index / 2) });
    }
  }
  const hashes = await store.subtreeHashes(tenant, refs);
  const out = new Map<string, Buffer>();
  refs.forEach((ref, i) => {
    const h = hashes[i];
    if (h) out.set(`${ref.level}/${ref.index}`, h);
  });
  return out;
}

function checkSignature(cp: Checkpoint, jwks: JwkSet): string | null {
  return verifyCheckpoint(cp, jwks)
    ? null
    : `checkpoint at tree size ${cp.treeSize} has a bad signature or an unknown key ${cp.keyid}`;
}

function checkRecord(
  row: StoredAuditRecord,
  index: number,
  tenant: string,
  leaf: Buffer,
): string | null {
  const text = row.record;
  if (row.index !== index)
    return `record is stored at index ${row.index} where ${index} was expected: the log has a gap`;
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
  if (leaf.toString('base64') !== row.leafHash)
    return 'record bytes do not match the leaf hash written with them: it was altered';
  return null;
}
