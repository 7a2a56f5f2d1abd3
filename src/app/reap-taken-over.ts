import { hostname } from 'node:os';
import type { Logger } from 'pino';
import type { Execution } from './open-execution.js';
import type { NodeWatch, Takeover } from './node-watch.js';

/**
 * After this node takes over a dead node of the same host, removes what that node's leases left
 * on the host: processes still running in their cgroups, the cgroups, their bounded workspaces
 * (DESIGN §12: no lease or cgroup of a dead node is left once it is reaped). A dead node of
 * another host is that host's to clean: its next start reaps its own orphans. `first` are the
 * takeovers made before execution was open. Returns the unsubscribe.
 */
export function reapTakenOverLocally(
  node: NodeWatch,
  execution: Pick<Execution, 'reapLeftByOthers'>,
  log: Pick<Logger, 'warn' | 'info'>,
  first: readonly Takeover[],
): () => void {
  const reap = async (t: Takeover): Promise<void> => {
    if (t.node.host !== hostname() || t.leases.length === 0) return;
    try {
      const found = await execution.reapLeftByOthers(t.leases);
      if (found.length > 0)
        log.info({ node: t.node.id, leases: found }, "removed what a dead node's leases left here");
    } catch (err) {
      log.warn({ err, node: t.node.id }, "could not remove what a dead node's leases left here");
    }
  };
  for (const t of first) void reap(t);
  return node.onTakeover((t) => void reap(t));
}
