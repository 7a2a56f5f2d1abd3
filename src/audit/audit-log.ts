import { ErrorCode, GatehouseError, isoTime } from '../core/index.js';
import type { AuditRecordDraft, Clock } from '../core/index.js';
import type { AuditStore } from './audit-store.js';
import { signCheckpoint } from './checkpoint.js';
import type { Checkpoint } from './checkpoint.js';
import { leafHash } from './merkle-hash.js';
import { consistencyProof, inclusionProof, rootHash } from './merkle.js';
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
 * consistency proofs. Leaf hashes are recomputed from the stored record bytes (never taken from
 * the stored hash column) and cached, since records are only ever appended.
 */
export class AuditLog {
  private readonly leaves = new Map<string, Buffer[]>();

  constructor(private readonly options: { store: AuditStore; signer: Signer; clock: Clock }) {}

  private async leafHashes(tenant: string): Promise<Buffer[]> {
    const cached = this.leaves.get(tenant) ?? [];
    const size = await this.options.store.size(tenant);
    if (cached.length < size) {
      const rows = await this.options.store.records(tenant, cached.length, size);
      for (const r of rows) cached.push(leafHash(Buffer.from(r.record, 'utf8')));
      this.leaves.set(tenant, cached);
    }
    return cached;
  }

  /** Signs and stores a checkpoint of the tenant's log as it stands. */
  async checkpoint(tenant: string): Promise<Checkpoint> {
    const leaves = await this.leafHashes(tenant);
    const cp = signCheckpoint(
      {
        tenant,
        treeSize: leaves.length,
        rootHash: rootHash(leaves),
        timestamp: isoTime(this.options.clock.now()),
      },
      this.options.signer,
    );
    await this.options.store.saveCheckpoint(cp);
    return cp;
  }

  /**
   * The inclusion proof of record `index` in the tree of `size` records (default: the whole log).
   * @throws GatehouseError INVALID_INPUT when index or size are out of range.
   */
  async inclusion(tenant: string, index: number, size?: number): Promise<InclusionAnswer> {
    const leaves = await this.leafHashes(tenant);
    const treeSize = size ?? leaves.length;
    if (!(treeSize <= leaves.length) || !(index >= 0 && index < treeSize)) {
      throw new GatehouseError(
        ErrorCode.INVALID_INPUT,
        `index must be in [0, size) and size in [1, ${leaves.length}] (the log has ${leaves.length} records); got index=${index}, size=${treeSize}.`,
      );
    }
    return {
      index,
      treeSize,
      leafHash: leaves[index]!.toString('base64'),
      rootHash: rootHash(leaves, treeSize).toString('base64'),
      proof: inclusionProof(leaves, index, treeSize).map((h) => h.toString('base64')),
    };
  }

  /**
   * The consistency proof between tree sizes `from` and `to`.
   * @throws GatehouseError INVALID_INPUT unless 1 ≤ from ≤ to ≤ size of the log.
   */
  async consistency(tenant: string, from: number, to: number): Promise<ConsistencyAnswer> {
    const leaves = await this.leafHashes(tenant);
    if (!(from >= 1 && from <= to && to <= leaves.length)) {
      throw new GatehouseError(
        ErrorCode.INVALID_INPUT,
        `from and to must satisfy 1 ≤ from ≤ to ≤ ${leaves.length} (the log's size); got from=${from}, to=${to}.`,
      );
    }
    return {
      fromSize: from,
      toSize: to,
      fromRoot: rootHash(leaves, from).toString('base64'),
      toRoot: rootHash(leaves, to).toString('base64'),
      proof: consistencyProof(leaves, from, to).map((h) => h.toString('base64')),
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
