import { GatehouseError } from '../core/index.js';
import { emptyRoot, nodeHash } from './merkle-hash.js';
import { appendSiblings, completedSubtrees } from './merkle-subtree.js';
import type { SubtreeHash } from './merkle-subtree.js';

/**
 * A compact range over a growing RFC 6962 log: the roots of the perfect subtrees that make up the
 * first `size` leaves, largest first (one per set bit of `size`). Keeps the root of a log of any
 * size in O(log n) memory and O(1) amortised hashing per append.
 */
export class MerkleFrontier {
  #size = 0;
  readonly #hashes: Buffer[] = [];

  /**
   * A frontier resumed from a saved {@link MerkleFrontier.size} and {@link MerkleFrontier.hashes}.
   * @throws GatehouseError `INVALID_INPUT` when the number of hashes does not fit `size`.
   */
  static restore(size: number, hashes: readonly Buffer[]): MerkleFrontier {
    if (!Number.isSafeInteger(size) || size < 0 || popCount(size) !== hashes.length) {
      throw new GatehouseError(
        'INVALID_INPUT',
        `a frontier of tree size ${size} needs ${popCount(size)} subtree hashes, got ${hashes.length}`,
      );
    }
    const f = new MerkleFrontier();
    f.#size = size;
    f.#hashes.push(...hashes.map((h) => Buffer.from(h)));
    return f;
  }

  /** The number of leaves appended so far. */
  get size(): number {
    return this.#size;
  }

  /** A copy of the subtree roots, largest subtree first; persist it with `size` to resume. */
  get hashes(): Buffer[] {
    return this.#hashes.map((h) => Buffer.from(h));
  }

  /**
   * Appends one leaf hash (already `leafHash`ed); returns the subtrees of level ≥ 1 it completes,
   * lowest first (see {@link completedSubtrees}), for a store that keeps them.
   */
  append(leaf: Uint8Array): SubtreeHash[] {
    // Each trailing 1 bit of the old size is a perfect subtree that now merges with the new one;
    // those subtrees are the last hashes, the smallest (the deepest sibling) at the end.
    const merging = appendSiblings(this.#size).length;
    const siblings = this.#hashes.splice(this.#hashes.length - merging, merging).reverse();
    const completed = completedSubtrees(this.#size, leaf, siblings);
    this.#hashes.push(completed.at(-1)?.hash ?? Buffer.from(leaf));
    this.#size += 1;
    return completed;
  }

  /** The RFC 6962 root hash (MTH) of the leaves appended so far; the empty root when none. */
  root(): Buffer {
    let acc: Buffer | undefined;
    for (let i = this.#hashes.length - 1; i >= 0; i--) {
      const h = this.#hashes[i] as Buffer;
      acc = acc === undefined ? h : nodeHash(h, acc);
    }
    return acc === undefined ? emptyRoot() : Buffer.from(acc);
  }
}

function popCount(n: number): number {
  let count = 0;
  for (let x = n; x > 0; x = Math.floor(x / 2)) count += x % 2;
  return count;
}
