import { transition } from '../core/index.js';
import type { Transitions } from '../core/index.js';

/** Lifecycle of a lease of execution capacity (DESIGN §4). */
export const LeaseStatus = {
  active: 'active',
  released: 'released',
  reaped: 'reaped',
} as const;
export type LeaseStatus = (typeof LeaseStatus)[keyof typeof LeaseStatus];

const transitions: Transitions<LeaseStatus> = {
  active: ['released', 'reaped'],
  released: [],
  reaped: [],
};

/**
 * The lease status after moving from `from` to `to`.
 * @throws IllegalStateError when the move is not in the table.
 */
export function transitionLease(from: LeaseStatus, to: LeaseStatus): LeaseStatus {
  return transition('lease', transitions, from, to);
}

/** The resources a lease reserves from its pool. */
export interface LeaseResources {
  /** CPU quota in cores (0.5 = half a core). */
  cpus: number;
  memoryBytes: number;
  gpus: number;
  /** Most processes at once. */
  pids: number;
}

/**
 * A grant of execution capacity for one invocation, or for one attempt whose calls share a
 * workspace: resources, timeout, read-only mounts, egress allow-list and the call's temporary
 * credentials (by reference; values never leave the broker).
 */
export interface Lease {
  id: string;
  tenant: string;
  pool: string;
  /** `invocation/<id>`, or `attempt/<principal>/<runId>/<attemptId>` (each part URI-escaped). */
  holder: string;
  /**
   * The agent (principal) whose call asked for it, counted against its quota; null for a lease
   * no agent asked for (an MCP upstream's). Leases stored before agents were recorded lack it.
   */
  agent: string | null;
  /**
   * The gateway node whose sandbox holds it (DESIGN §12); null for a lease stored before nodes
   * were recorded, or made without a node (a test's capacity).
   */
  node?: string | null;
  status: LeaseStatus;
  resources: LeaseResources;
  timeoutMs: number;
  readOnlyMounts: { host: string; sandbox: string }[];
  egressAllow: string[];
  credentials: { ref: string; scope: string; expiresAt: string }[];
  /** For attempt leases: the repository and ref the worktree was made from. */
  worktree: { repository: string; ref: string } | null;
  createdAt: string;
  /** After this the reaper ends the lease, whatever holds it. */
  expiresAt: string;
  releasedAt: string | null;
  /** Why it ended: released by its call, or reaped (and what the reaper found). */
  endReason: string | null;
}
