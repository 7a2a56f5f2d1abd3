import { transition } from '../core/index.js';
import type { Transitions } from '../core/index.js';

/**
 * Lifecycle of a gateway node on a shared database (DESIGN §12): `alive` while it heartbeats;
 * `stopped` after a clean shutdown; `claimed` once another node found its heartbeat older than the
 * grace period and took over its running calls and its leases. A node that starts again with the
 * same id is `alive` again.
 */
export const NodeStatus = {
  alive: 'alive',
  stopped: 'stopped',
  claimed: 'claimed',
} as const;
export type NodeStatus = (typeof NodeStatus)[keyof typeof NodeStatus];

const transitions: Transitions<NodeStatus> = {
  alive: ['stopped', 'claimed'],
  stopped: ['alive'],
  claimed: ['alive'],
};

/**
 * The node status after moving from `from` to `to`.
 * @throws IllegalStateError when the move is not in the table.
 */
export function transitionNode(from: NodeStatus, to: NodeStatus): NodeStatus {
  return transition('node', transitions, from, to);
}

/** A gateway process registered on the database. */
export interface GatewayNode {
  /** Stable for a data directory (kept in `DATA/node-id`), so a restart finds its own calls. */
  id: string;
  /** The host name it runs on. */
  host: string;
  pid: number;
  status: NodeStatus;
  startedAt: string;
  /** Its last heartbeat (its own clock). */
  heartbeatAt: string;
  /** When it stopped or was claimed. */
  endedAt: string | null;
  /** The node that took it over, once `claimed`. */
  claimedBy: string | null;
}
