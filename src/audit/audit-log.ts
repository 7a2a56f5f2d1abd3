import { ErrorCode, GatehouseError, isoTime } from '../core/index.js';
import type { AuditRecordDraft, Clock } from '../core/index.js';
import type { AuditStore } from './audit-store.js';
import { signCheckpoint } from './checkpoint.js';
import type { Checkpoint } from './checkpoint.js';
import { leafHash } from './merkle-hash.js';
import { checkCount, proveConsistency, proveInclusion, treeRoot } from './merkle-proof.js';
import type { SubtreeSource } from './merkle-proof.js';
import type { SubtreeRef } from './merkle-subtree.js';
import type { Signer } from './signer.js';

/** An inclusion proof as served (DESIGN §8): Merkle hashes in base64. */
export interface InclusionAnswer {
  index: number;
  treeSize: number;
  leafHash: string;
  rootHash: string;
  proof: string[];
}

/** A consistency proof as served. */
export interface ConsistencyAnswer {
  fromSize: number;
  toSize: number;
  fromRoot: string;
  toRoot: string;
  proof: string[];
}

/**
 * The read side of the per-tenant RFC 6962 audit logs: signed checkpoints, inclusion and
 * consistency proofs, for the whole log or any earlier tree size. Roots and proofs come from the
 * stored hashes of perfect subtrees: O(log n) reads and hashes each, never a pass over the log,
 * so no request can hold the event loop for long. The proven leaf's hash is recomputed from the
 * record's stored bytes, so a record altered in place fails its own proof.
 */
export class AuditLog {
  constructor(private readonly options: { store: AuditStore; signer: Signer; clock: Clock }) {}

  /** Signs and stores a checkpoint of the tenant's log as it stands. */
  async checkpoint(tenant: string): Promise<Checkpoint> {
    const size = await this.options.store.size(tenant);
    const cp = signCheckpoint(
      {
        tenant,
        treeSize: size,
        rootHash: await treeRoot(this.subtrees(tenant), size),
        timestamp: isoTime(this.options.clock.now()),
      },
      this.options.signer,
    );
    await this.options.store.saveCheckpoint(cp);
    return cp;
  }

  /**
   * The inclusion proof of record `index` in the tree of `size` records (default: the whole log).
   * @throws GatehouseError INVALID_INPUT naming `index` or `size` when either is out of range.
   */
  async inclusion(tenant: string, index: number, size?: number): Promise<InclusionAnswer> {
    checkCount(index, 'index');
    if (size !== undefined) checkCount(size, 'size');
    const logSize = await this.options.store.size(tenant);
    if (size !== undefined && (size < 1 || size > logSize)) {
      throw outOfRange('size', size, logSize, `size must be between 1 and ${logSize}`);
    }
    const treeSize = size ?? logSize;
    if (index >= treeSize) {
      const bound = size === undefined ? `${logSize}, the log's size` : `size (${size})`;
      throw outOfRange('index', index, logSize, `index must be below ${bound}`);
    }
    const [row] = await this.options.store.records(tenant, index, index + 1);
    if (!row) throw missing(tenant, `record ${index}`);
    const { rootHash, proof } = await proveInclusion(this.subtrees(tenant), index, treeSize);
    return {
      index,
      treeSize,
      leafHash: leafHash(Buffer.from(row.record, 'utf8')).toString('base64'),
      rootHash: rootHash.toString('base64'),
      proof: proof.map((h) => h.toString('base64')),
    };
  }

  /**
   * The consistency proof between tree sizes `from` and `to`.
   * @throws GatehouseError INVALID_INPUT naming `from` or `to` unless 1 ≤ from ≤ to ≤ the log's
   *   size.
   */
  async consistency(tenant: string, from: number, to: number): Promise<ConsistencyAnswer> {
    checkCount(from, 'from');
    checkCount(to, 'to');
    const logSize = await this.options.store.size(tenant);
    if (from < 1) {
      throw outOfRange(
        'from',
        from,
        logSize,
        'from must be at least 1 (every log extends the empty one)',
      );
    }
    if (to > logSize) throw outOfRange('to', to, logSize, `to must be at most ${logSize}`);
    if (from > to) throw outOfRange('from', from, logSize, `from must not exceed to (${to})`);
    const p = await proveConsistency(this.subtrees(tenant), from, to);
    return {
      fromSize: from,
      toSize: to,
      fromRoot: p.fromRoot.toString('base64'),
      toRoot: p.toRoot.toString('base64'),
      proof: p.proof.map((h) => h.toString('base64')),
    };
  }

  /** The tenant's stored subtrees; a missing one is a damaged store, never a client's fault. */
  private subtrees(tenant: string): SubtreeSource {
    return async (refs) => {
      const hashes = await this.options.store.subtreeHashes(tenant, refs);
      return hashes.map((h, i) => {
        if (h === null) {
          const ref = refs[i] as SubtreeRef;
          throw missing(tenant, `the hash of subtree ${ref.level}/${ref.index}`);
        }
        return h;
      });
    };
  }

  /**
   * Appends records that belong to no other change (e.g. what an agent read through /mcp), in
   * one transaction.
   */
  append(records: AuditRecordDraft[]): Promise<void> {
    return this.options.store.append(records);
  }

  /**
   * One audit record: its parsed content, its exact JCS text (the leaf) and its leaf hash.
   * @throws GatehouseError NOT_FOUND when the index is beyond the log.
   */
  async record(
    tenant: string,
    index: number,
  ): Promise<{ index: number; record: unknown; leaf: string; leafHash: string }> {
    const [row] = await this.options.store.records(tenant, index, index + 1);
    if (!row)
      throw new GatehouseError(
        ErrorCode.NOT_FOUND,
        `Audit record ${index} does not exist in this tenant's log.`,
      );
    return {
      index,
      record: JSON.parse(row.record) as unknown,
      leaf: row.record,
      leafHash: leafHash(Buffer.from(row.record, 'utf8')).toString('base64'),
    };
  }
}

function outOfRange(
  parameter: string,
  value: number,
  logSize: number,
  rule: string,
): GatehouseError {
  return new GatehouseError(
    ErrorCode.INVALID_INPUT,
    `${rule}; got ${parameter}=${value} (the log has ${logSize} records).`,
    { details: { parameter, value, logSize } },
  );
}

function missing(tenant: string, what: string): GatehouseError {
  return new GatehouseError(
    ErrorCode.INTERNAL,
    `The audit log of tenant ${tenant} has no ${what}: the store is damaged; run \`gatehouse audit verify\`.`,
  );
}
