import { ErrorCode, GatehouseError } from '../core/index.js';
import { envInteger } from './env-integer.js';

/** How a gateway node heartbeats and when another node takes it over (DESIGN §12). */
export interface NodeConfig {
  /** How often the node records its heartbeat and looks for nodes whose heartbeat stopped. */
  heartbeatMs: number;
  /**
   * How old another node's last heartbeat may be before this node takes it over (its running
   * write calls `uncertain`, read calls `failed`, leases reaped).
   */
  graceMs: number;
}

/** Heartbeat every 5 s; take over a node silent for 30 s. */
export const DEFAULT_NODE_CONFIG: NodeConfig = { heartbeatMs: 5_000, graceMs: 30_000 };

/**
 * `GATEHOUSE_NODE_HEARTBEAT_MS` and `GATEHOUSE_NODE_GRACE_MS` over `flags` and the defaults.
 * @throws GatehouseError INVALID_INPUT when the interval is under 100 ms or over an hour, or
 *   the grace period is not at least two intervals (a node would be taken over between two of
 *   its own heartbeats).
 */
export function loadNodeConfig(flags: Partial<NodeConfig>, env: NodeJS.ProcessEnv): NodeConfig {
  const heartbeatMs =
    flags.heartbeatMs ??
    envInteger(env.GATEHOUSE_NODE_HEARTBEAT_MS, 'GATEHOUSE_NODE_HEARTBEAT_MS') ??
    DEFAULT_NODE_CONFIG.heartbeatMs;
  const graceMs =
    flags.graceMs ??
    envInteger(env.GATEHOUSE_NODE_GRACE_MS, 'GATEHOUSE_NODE_GRACE_MS') ??
    DEFAULT_NODE_CONFIG.graceMs;
  if (heartbeatMs < 100 || heartbeatMs > 3_600_000)
    throw new GatehouseError(
      ErrorCode.INVALID_INPUT,
      `GATEHOUSE_NODE_HEARTBEAT_MS must be an integer in 100–3600000 (milliseconds); got ${heartbeatMs}.`,
    );
  if (graceMs < 2 * heartbeatMs)
    throw new GatehouseError(
      ErrorCode.INVALID_INPUT,
      `GATEHOUSE_NODE_GRACE_MS must be at least twice GATEHOUSE_NODE_HEARTBEAT_MS (${2 * heartbeatMs}), or a live node would be taken over between its heartbeats; got ${graceMs}.`,
    );
  return { heartbeatMs, graceMs };
}
