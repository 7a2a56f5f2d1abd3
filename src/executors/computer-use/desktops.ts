import type { ConfiningSandbox } from '../browser/index.js';
import { Desktop } from './desktop.js';
import type { DesktopSpec } from './desktop.js';

/**
 * The desktops of live leases: one per lease and tool (its display and application), kept
 * between calls so an attempt's successive calls see one desktop, and closed when the lease ends.
 */
export class Desktops {
  private readonly open = new Map<string, { leaseId: string; desktop: Promise<Desktop> }>();
  private made = 0;
  private closed = false;

  constructor(private readonly sandbox: ConfiningSandbox) {}

  /**
   * The running desktop of `leaseId` for `tool`, or a new one started from `spec` (its id is
   * made here). `fresh` says which. A desktop whose display or driver died is replaced.
   * @throws Error when a new desktop does not start (nothing of it is left).
   */
  async get(
    leaseId: string,
    tool: string,
    spec: Omit<DesktopSpec, 'id'>,
    timeoutMs: number,
  ): Promise<{ desktop: Desktop; fresh: boolean }> {
    if (this.closed) throw new Error('the gateway is closing; no desktop starts');
    const key = `${leaseId}\u0000${tool}`;
    const known = this.open.get(key);
    if (known) {
      const desktop = await known.desktop.catch(() => null);
      if (desktop?.running) return { desktop, fresh: false };
      if (this.open.get(key) === known) this.open.delete(key);
      await desktop?.close();
    }
    this.made += 1;
    const id = `${leaseId}.desktop-${this.made}`;
    const starting = Desktop.start(this.sandbox, { ...spec, id }, timeoutMs);
    const entry = { leaseId, desktop: starting };
    this.open.set(key, entry);
    try {
      return { desktop: await starting, fresh: true };
    } catch (err) {
      if (this.open.get(key) === entry) this.open.delete(key);
      throw err;
    }
  }

  /** Closes the desktops of a lease that ended: their displays, applications and cgroups. */
  async endLease(leaseId: string): Promise<void> {
    const ending = [...this.open].filter(([, e]) => e.leaseId === leaseId);
    for (const [key] of ending) this.open.delete(key);
    await Promise.all(ending.map(([, e]) => closeEntry(e.desktop)));
  }

  /** Closes every desktop; none starts after. Safe twice. */
  async close(): Promise<void> {
    this.closed = true;
    const all = [...this.open.values()];
    this.open.clear();
    await Promise.all(all.map((e) => closeEntry(e.desktop)));
  }
}

async function closeEntry(desktop: Promise<Desktop>): Promise<void> {
  const d = await desktop.catch(() => null);
  await d?.close();
}
