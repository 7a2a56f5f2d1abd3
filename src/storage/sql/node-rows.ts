import type { ExpressionBuilder, Expression, SqlBool } from 'kysely';
import type { GatewayNode, NodeStatus } from '../../capacity/index.js';
import type { Tables } from '../schema/tables.js';

/**
 * The condition "stored by one of `nodes`" on a table with a `node` column; `null` in `nodes`
 * matches rows stored without a node.
 */
export function ofNodes<TB extends 'invocations' | 'leases'>(
  nodes: readonly (string | null)[],
): (eb: ExpressionBuilder<Tables, TB>) => Expression<SqlBool> {
  const ids = nodes.filter((n): n is string => n !== null);
  const orNull = nodes.includes(null);
  return (eb) => {
    const node = eb.ref('node' as never) as unknown as Expression<string | null>;
    const terms: Expression<SqlBool>[] = [];
    if (ids.length > 0) terms.push(eb(node, 'in', ids));
    if (orNull) terms.push(eb(node, 'is', null));
    return terms.length === 0 ? eb.lit(false) : eb.or(terms);
  };
}

/** The row of a node. */
export function nodeRow(n: GatewayNode): Tables['nodes'] {
  return {
    id: n.id,
    host: n.host,
    pid: n.pid,
    status: n.status,
    started_at: n.startedAt,
    heartbeat_at: n.heartbeatAt,
    ended_at: n.endedAt,
    claimed_by: n.claimedBy,
  };
}

/** A node from its row. */
export function parseNode(r: Tables['nodes']): GatewayNode {
  return {
    id: r.id,
    host: r.host,
    pid: r.pid,
    status: r.status as NodeStatus,
    startedAt: r.started_at,
    heartbeatAt: r.heartbeat_at,
    endedAt: r.ended_at,
    claimedBy: r.claimed_by,
  };
}
