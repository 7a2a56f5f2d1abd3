import type { GatewayNode } from './gateway-node.js';

/** The registry of gateway nodes on a shared database, with their heartbeats. */
export interface NodeStore {
  /**
   * Stores `node` as `alive` with its heartbeat at its start, replacing what was stored for its
   * id (a restart of the node). Safe to repeat.
   */
  register(node: GatewayNode): Promise<void>;
  /**
   * Moves the heartbeat of an `alive` node to `at`.
   * @returns false (and changes nothing) when the node is not `alive`: another node claimed it,
   *   or it stopped.
   */
  heartbeat(id: string, at: string): Promise<boolean>;
  /** Marks an `alive` node `stopped` at `at` (a clean shutdown). Does nothing otherwise. */
  stop(id: string, at: string): Promise<void>;
  /**
   * Claims for `claimer` every `alive` node other than itself whose heartbeat is older than
   * `staleBefore`, marking it `claimed` at `at`, in one conditional update: of several claimers at
   * once each stale node goes to exactly one.
   * @returns the nodes this call claimed, as now stored.
   */
  claimStale(claimer: string, staleBefore: string, at: string): Promise<GatewayNode[]>;
  /** The node with this id, if registered. */
  get(id: string): Promise<GatewayNode | undefined>;
  /** Every registered node, by id. */
  list(): Promise<GatewayNode[]>;
}
