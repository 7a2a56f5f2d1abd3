import { EventType } from '../../core/index.js';
import type { StoredEvent } from '../../core/index.js';
import { LOGGING_LEVELS } from '../../mcp/index.js';
import type { LoggingLevel, McpServerRecord, McpWatcher, UpstreamNotice } from '../../mcp/index.js';

/** The `_meta` key naming the upstream server a resource, prompt or notification comes from. */
export const UPSTREAM_META = 'gatehouse/upstream';

/** Events after which an agent's visible tools may differ. */
const TOOL_EVENTS: ReadonlySet<string> = new Set([
  EventType.DescriptorActivated,
  EventType.DescriptorRetired,
  EventType.McpServerStateChanged,
  EventType.McpToolUnbound,
]);

/** One open MCP session of this node, as the notifications see it. */
export interface LiveSession {
  tenant: string;
  /** The session's `tools/list` answer now, as comparable text. */
  tools(): Promise<string>;
  /** Whether the agent's closure reaches this upstream server now (tenant, bound, active). */
  reaches(serverId: string): Promise<boolean>;
  /** Sends a notification outside any request: on the session's GET stream, if one is open. */
  notify(method: string, params: Record<string, unknown>): Promise<void>;
  /** The level the agent set with `logging/setLevel`; null: no upstream log messages. */
  level: LoggingLevel | null;
  /** Resources the agent subscribed to, as `<server id> <uri>`. */
  readonly subscribed: Set<string>;
}

/** Subscribes to (`on`) or unsubscribes from a resource of an upstream server. */
export type UpstreamSubscribe = (
  tenant: string,
  serverId: string,
  uri: string,
  on: boolean,
) => Promise<void>;

/** Options of {@link LiveSessions}. */
export interface LiveSessionsOptions {
  /**
   * Follows the outbox (the event stream hub's shared read): calls the listener with each event
   * committed from now on, returns the removal. Tool events make sessions of their tenant check
   * their tools again.
   */
  events: (listener: (e: StoredEvent) => void) => () => void;
  /** Changes a server's subscription upstream (this node's pooled connection). */
  subscribe: UpstreamSubscribe;
  /** Asks a server for log messages of `level` and above (this node's pooled connection). */
  setLevel?: (tenant: string, serverId: string, level: LoggingLevel) => Promise<void>;
  /**
   * Watches this node's upstream servers (changes, notices) while sessions are open; returns the
   * unwatch. Absent: no upstream servers.
   */
  watchUpstreams?: (w: McpWatcher) => () => void;
  /** Told of a failure of a background step (the outbox read, an upstream unsubscribe). */
  onError: (err: unknown, what: string) => void;
}

interface Entry {
  session: LiveSession;
  /** `tools()` when last checked. */
  tools: string | null;
}

/**
 * The open MCP sessions of this node, and what is sent to them outside their requests:
 * `notifications/tools/list_changed` when an agent's `tools/list` answer changed (checked after
 * each tool event of its tenant in the outbox, whichever node wrote it, and after each MCP change
 * made here), and upstream log messages and resource updates, each only to the sessions of the
 * server's tenant whose closure reaches the server (and, for updates, that subscribed).
 */
export class LiveSessions {
  private readonly entries = new Set<Entry>();
  private readonly byTenant = new Map<string, Set<Entry>>();
  /** Sessions subscribed to each `<tenant> <server> <uri>` upstream, on this node. */
  private readonly upstreamSubs = new Map<string, number>();
  private unfollow: (() => void) | null = null;
  private unwatch: (() => void) | null = null;
  /** Tenants waiting for a check, and whether one runs. */
  private readonly dirty = new Set<string>();
  private checking = false;

  constructor(private readonly options: LiveSessionsOptions) {}

  /** Adds an open session (its tools as they are now are the baseline); returns its removal. */
  add(session: LiveSession): () => void {
    const e: Entry = { session, tools: null };
    this.entries.add(e);
    let mine = this.byTenant.get(session.tenant);
    if (!mine) this.byTenant.set(session.tenant, (mine = new Set()));
    mine.add(e);
    if (this.entries.size === 1) this.begin();
    void session.tools().then(
      (t) => (e.tools ??= t),
      () => undefined,
    );
    return () => this.remove(e);
  }

  /** Stops watching; sessions stay until removed. Safe to repeat. */
  close(): void {
    this.unfollow?.();
    this.unfollow = null;
    this.unwatch?.();
    this.unwatch = null;
  }

  /** The tenant's agents' tools may have changed: each of its sessions checks its list again. */
  toolsMayHaveChanged(tenant: string): void {
    if (!this.byTenant.has(tenant)) return;
    this.dirty.add(tenant);
    void this.check();
  }

  /** Forwards what an upstream server told to the sessions it may reach. */
  async notice(server: McpServerRecord, notice: UpstreamNotice): Promise<void> {
    const tag = { [UPSTREAM_META]: { server: server.id, name: server.name, untrusted: true } };
    for (const e of [...(this.byTenant.get(server.tenant) ?? [])]) {
      const x = e.session;
      let send: (() => Promise<void>) | null = null;
      if (notice.kind === 'message') {
        if (x.level === null || rank(notice.params.level) < rank(x.level)) continue;
        const params = { ...notice.params, logger: notice.params.logger ?? server.name };
        send = () => x.notify('notifications/message', { ...params, _meta: tag });
      } else {
        if (!x.subscribed.has(`${server.id} ${notice.uri}`)) continue;
        send = () => x.notify('notifications/resources/updated', { uri: notice.uri, _meta: tag });
      }
      try {
        if (await x.reaches(server.id)) await send();
      } catch (err) {
        this.options.onError(err, 'forwarding an upstream notification');
      }
    }
  }

  /**
   * The most detailed level any session of the tenant on this node set, for the upstream servers
   * (each session's messages are filtered to its own level); null when none set one.
   */
  levelOf(tenant: string): LoggingLevel | null {
    let best: LoggingLevel | null = null;
    for (const e of this.byTenant.get(tenant) ?? []) {
      const l = e.session.level;
      if (l !== null && (best === null || rank(l) < rank(best))) best = l;
    }
    return best;
  }

  /**
   * Subscribes the session to a resource of a server: the first session of this node to do so
   * subscribes upstream. @throws the upstream's error (the session is not subscribed then).
   */
  async subscribe(session: LiveSession, serverId: string, uri: string): Promise<void> {
    const key = `${serverId} ${uri}`;
    if (session.subscribed.has(key)) return;
    const up = `${session.tenant} ${key}`;
    const n = this.upstreamSubs.get(up) ?? 0;
    if (n === 0) await this.options.subscribe(session.tenant, serverId, uri, true);
    if (session.subscribed.has(key)) return;
    session.subscribed.add(key);
    this.upstreamSubs.set(up, (this.upstreamSubs.get(up) ?? 0) + 1);
  }

  /** Ends the session's subscription; the last of this node unsubscribes upstream. */
  async unsubscribe(session: LiveSession, serverId: string, uri: string): Promise<void> {
    const key = `${serverId} ${uri}`;
    if (!session.subscribed.delete(key)) return;
    await this.release(session.tenant, key);
  }

  private async release(tenant: string, key: string): Promise<void> {
    const up = `${tenant} ${key}`;
    const n = (this.upstreamSubs.get(up) ?? 1) - 1;
    if (n > 0) {
      this.upstreamSubs.set(up, n);
      return;
    }
    this.upstreamSubs.delete(up);
    const cut = key.indexOf(' ');
    await this.options.subscribe(tenant, key.slice(0, cut), key.slice(cut + 1), false);
  }

  /**
   * A new connection to the server (a reconnect) is asked again for what this node's sessions
   * asked of the previous one: each resource they subscribed to, and the most detailed log level
   * of the sessions that reach it. A failure is reported, not retried (the next reconnect tries).
   */
  private async restore(server: McpServerRecord): Promise<void> {
    const prefix = `${server.tenant} ${server.id} `;
    const work: Promise<void>[] = [];
    for (const key of this.upstreamSubs.keys())
      if (key.startsWith(prefix))
        work.push(this.options.subscribe(server.tenant, server.id, key.slice(prefix.length), true));
    const setLevel = this.options.setLevel;
    if (setLevel) {
      work.push(
        (async () => {
          let best: LoggingLevel | null = null;
          for (const e of [...(this.byTenant.get(server.tenant) ?? [])]) {
            const l = e.session.level;
            if (l === null || (best !== null && rank(l) >= rank(best))) continue;
            if (await e.session.reaches(server.id)) best = l;
          }
          if (best !== null) await setLevel(server.tenant, server.id, best);
        })(),
      );
    }
    for (const r of await Promise.allSettled(work))
      if (r.status === 'rejected')
        this.options.onError(r.reason, 'restoring subscriptions and log level after a reconnect');
  }

  private remove(e: Entry): void {
    if (!this.entries.delete(e)) return;
    const tenant = e.session.tenant;
    const mine = this.byTenant.get(tenant);
    mine?.delete(e);
    if (mine?.size === 0) this.byTenant.delete(tenant);
    for (const key of e.session.subscribed)
      this.release(tenant, key).catch((err: unknown) =>
        this.options.onError(err, 'unsubscribing upstream'),
      );
    e.session.subscribed.clear();
    if (this.entries.size === 0) this.close();
  }

  /** The first session came: follow the outbox and the upstream servers. */
  private begin(): void {
    this.unwatch =
      this.options.watchUpstreams?.({
        changed: (tenant) => this.toolsMayHaveChanged(tenant),
        notice: (server, notice) => void this.notice(server, notice),
        connected: (server) => void this.restore(server),
      }) ?? null;
    this.unfollow = this.options.events((e) => {
      if (TOOL_EVENTS.has(e.type)) this.toolsMayHaveChanged(e.tenant);
    });
  }

  /** Checks the dirty tenants' sessions, one tenant at a time, until none is left. */
  private async check(): Promise<void> {
    if (this.checking) return;
    this.checking = true;
    try {
      for (let t = first(this.dirty); t !== undefined; t = first(this.dirty)) {
        this.dirty.delete(t);
        for (const e of [...(this.byTenant.get(t) ?? [])]) {
          try {
            const now = await e.session.tools();
            const was = e.tools;
            e.tools = now;
            if (was !== null && was !== now && this.entries.has(e))
              await e.session.notify('notifications/tools/list_changed', {});
          } catch (err) {
            this.options.onError(err, 'checking a session for changed tools');
          }
        }
      }
    } finally {
      this.checking = false;
    }
  }
}

function first(set: Set<string>): string | undefined {
  for (const x of set) return x;
  return undefined;
}

/** A level's place: the higher, the more severe. */
function rank(level: LoggingLevel): number {
  return LOGGING_LEVELS.indexOf(level);
}
