import type { ExecutionLease } from '../../invocation/index.js';
import { EgressRelay } from '../../sandbox/index.js';
import type { RefusedBetweenCalls } from '../../sandbox/index.js';
import { openBrowserSession } from './browser-session.js';
import type { BrowserSession, ConfiningSandbox } from './browser-session.js';
import { PROFILE_INSIDE } from './chromium-launcher.js';

/** A browser kept running between the calls of one attempt, and its way to the egress proxy. */
export interface WarmBrowser {
  session: BrowserSession;
  /** Points the browser's network at a call's egress endpoint, or nowhere (null) between calls. */
  useEgress(socketPath: string | null): void;
  /** The connections the browser tried while no call ran, since the last take. */
  takeRefused(): RefusedBetweenCalls[];
}

/** Where a warm browser's launcher, policy and relay socket go, and who may reach the relay. */
export interface WarmScratch {
  /** A directory of the gateway's the sandbox user can pass through (mode 0711). */
  scratch?: string;
  /** The sandbox user of a root gateway, which connects to the relay; null otherwise. */
  owner: { uid: number; gid: number } | null;
}

interface Entry {
  leaseId: string;
  warm: Promise<{ session: BrowserSession; relay: EgressRelay | null }>;
}

/**
 * The browsers of live attempt leases: one per lease and tool (its Chromium, profile and page),
 * kept between calls so an attempt's successive calls see one browser (its cookies, storage and
 * page), and closed when the lease ends. Each has a cgroup of its own (`LEASE.browser-N`) and an
 * {@link EgressRelay} to the running call's egress endpoint.
 */
export class WarmBrowsers {
  private readonly open = new Map<string, Entry>();
  private made = 0;
  private closed = false;

  constructor(
    private readonly sandbox: ConfiningSandbox,
    private readonly where: WarmScratch,
  ) {}

  /**
   * The running browser of the lease for `tool`, or a new one; `fresh` says which. A browser that
   * died or was closed is replaced.
   * @throws Error when a new browser does not start (nothing of it is left).
   */
  async get(
    lease: ExecutionLease,
    tool: string,
    viewport: { width: number; height: number },
    timeoutMs: number,
  ): Promise<{ warm: WarmBrowser; fresh: boolean }> {
    if (this.closed) throw new Error('the gateway is closing; no browser starts');
    const key = `${lease.id}\u0000${tool}`;
    const known = this.open.get(key);
    if (known) {
      const w = await known.warm.catch(() => null);
      if (w?.session.running()) return { warm: asWarm(w), fresh: false };
      if (this.open.get(key) === known) this.open.delete(key);
      await closeWarm(known.warm);
    }
    this.made += 1;
    const n = this.made;
    const starting = (async () => {
      const relay =
        lease.egressSocket === null
          ? null
          : await EgressRelay.open(this.where.scratch ?? '/tmp', this.where.owner);
      try {
        const session = await openBrowserSession({
          sandbox: this.sandbox,
          lease,
          viewport,
          timeoutMs,
          id: `${lease.id}.browser-${n}`,
          profile: `${PROFILE_INSIDE}-${n}`,
          egressSocket: relay?.path ?? null,
          ...(this.where.scratch === undefined ? {} : { scratch: this.where.scratch }),
        });
        return { session, relay };
      } catch (err) {
        await relay?.close();
        throw err;
      }
    })();
    const entry = { leaseId: lease.id, warm: starting };
    this.open.set(key, entry);
    try {
      return { warm: asWarm(await starting), fresh: true };
    } catch (err) {
      if (this.open.get(key) === entry) this.open.delete(key);
      throw err;
    }
  }

  /** Closes the browsers of a lease that ended: Chromium, its cgroup, its relay. */
  async endLease(leaseId: string): Promise<void> {
    const ending = [...this.open].filter(([, e]) => e.leaseId === leaseId);
    for (const [key] of ending) this.open.delete(key);
    await Promise.all(ending.map(([, e]) => closeWarm(e.warm)));
  }

  /** Closes every browser; none starts after. Safe twice. */
  async close(): Promise<void> {
    this.closed = true;
    const all = [...this.open.values()];
    this.open.clear();
    await Promise.all(all.map((e) => closeWarm(e.warm)));
  }
}

function asWarm(w: { session: BrowserSession; relay: EgressRelay | null }): WarmBrowser {
  return {
    session: w.session,
    useEgress: (path) => w.relay?.use(path),
    takeRefused: () => w.relay?.takeRefused() ?? [],
  };
}

async function closeWarm(
  warm: Promise<{ session: BrowserSession; relay: EgressRelay | null }>,
): Promise<void> {
  const w = await warm.catch(() => null);
  await w?.session.close();
  await w?.relay?.close();
}
