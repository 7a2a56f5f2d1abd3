import type { ExecutionLease } from '../../invocation/index.js';
import { EgressRelay, LeaseKeeper } from '../../sandbox/index.js';
import type { RefusedBetweenCalls } from '../../sandbox/index.js';
import { openBrowserSession } from './browser-session.js';
import type { BrowserSession, ConfiningSandbox } from './browser-session.js';
import { PROFILE_INSIDE } from './chromium-launcher.js';

/** A browser kept running between the calls of one attempt, and its way to the egress proxy. */
export class WarmBrowser {
  constructor(
    readonly session: BrowserSession,
    private readonly relay: EgressRelay | null,
  ) {}

  /** Points the browser's network at a call's egress endpoint, or nowhere (null) between calls. */
  useEgress(socketPath: string | null): void {
    this.relay?.use(socketPath);
  }

  /** The connections the browser tried while no call ran, since the last take. */
  takeRefused(): RefusedBetweenCalls[] {
    return this.relay?.takeRefused() ?? [];
  }

  /** Closes Chromium (its cgroup) and its relay. Safe twice. */
  async close(): Promise<void> {
    await this.session.close();
    await this.relay?.close();
  }
}

/** Where a warm browser's launcher, policy and relay socket go, and who may reach the relay. */
export interface WarmScratch {
  /** A directory of the gateway's the sandbox user can pass through (mode 0711). */
  scratch?: string;
  /** The sandbox user of a root gateway, which connects to the relay; null otherwise. */
  owner: { uid: number; gid: number } | null;
}

/**
 * The browsers of live attempt leases: one per lease and tool (its Chromium, profile and page),
 * kept between calls so an attempt's successive calls see one browser (its cookies, storage and
 * page), replaced when it died, and closed when the lease ends.
 */
export function warmBrowsers(): LeaseKeeper<WarmBrowser> {
  return new LeaseKeeper<WarmBrowser>({
    what: 'browser',
    running: (w) => w.session.running(),
    close: (w) => w.close(),
  });
}

/**
 * Starts the `n`th warm browser of a keeper for `lease`: a cgroup of its own (`LEASE.browser-N`),
 * a profile of its own in the workspace, and an {@link EgressRelay} to the running call's egress
 * endpoint (none when the lease has no network).
 * @throws Error when it does not start (nothing of it is left).
 */
export async function startWarmBrowser(
  sandbox: ConfiningSandbox,
  where: WarmScratch,
  lease: ExecutionLease,
  viewport: { width: number; height: number },
  timeoutMs: number,
  n: number,
): Promise<WarmBrowser> {
  const relay =
    lease.egressSocket === null
      ? null
      : await EgressRelay.open(where.scratch ?? '/tmp', where.owner);
  try {
    const session = await openBrowserSession({
      sandbox,
      lease,
      viewport,
      timeoutMs,
      id: `${lease.id}.browser-${n}`,
      profile: `${PROFILE_INSIDE}-${n}`,
      egressSocket: relay?.path ?? null,
      ...(where.scratch === undefined ? {} : { scratch: where.scratch }),
    });
    return new WarmBrowser(session, relay);
  } catch (err) {
    await relay?.close();
    throw err;
  }
}
