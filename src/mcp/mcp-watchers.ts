import type { LedgerEntries } from '../core/index.js';
import type { McpBinding, Discovery } from './mcp-binding.js';
import type { McpServerRecord, McpServerState } from './mcp-server.js';
import type { McpStore, McpStoreChange } from './mcp-store.js';
import type { UpstreamNotice } from './upstream/connection-options.js';

/** Told what changes in the upstream servers of this node (the MCP endpoint's sessions). */
export interface McpWatcher {
  /** A server of the tenant, its discovery or its bindings changed here (stored). */
  changed?(tenant: string): void;
  /** A server told something outside any call: a log message, a resource update. */
  notice?(server: McpServerRecord, notice: UpstreamNotice): void;
  /**
   * A connection to the server opened on this node (the first, or a reconnect): it knows nothing
   * of the subscriptions and log level asked of an earlier one.
   */
  connected?(server: McpServerRecord): void;
}

/** The watchers of one MCP service; a watcher that throws does not stop the others. */
export class McpWatchers {
  private readonly watchers = new Set<McpWatcher>();

  /** Adds a watcher; returns its removal. */
  add(w: McpWatcher): () => void {
    this.watchers.add(w);
    return () => this.watchers.delete(w);
  }

  /** See {@link McpWatcher.changed}. */
  changed(tenant: string): void {
    for (const w of this.watchers) safely(() => w.changed?.(tenant));
  }

  /** See {@link McpWatcher.notice}. */
  notice(server: McpServerRecord, notice: UpstreamNotice): void {
    for (const w of this.watchers) safely(() => w.notice?.(server, notice));
  }

  /** See {@link McpWatcher.connected}. */
  connected(server: McpServerRecord): void {
    for (const w of this.watchers) safely(() => w.connected?.(server));
  }
}

function safely(f: () => void): void {
  try {
    f();
  } catch {
    // A watcher's failure is its own; the change is stored either way.
  }
}

/** The store, telling `watchers` of each change written through it. */
export class WatchedMcpStore implements McpStore {
  constructor(
    private readonly store: McpStore,
    private readonly watchers: McpWatchers,
  ) {}

  async create(server: McpServerRecord, ledger: LedgerEntries): Promise<boolean> {
    const ok = await this.store.create(server, ledger);
    if (ok) this.watchers.changed(server.tenant);
    return ok;
  }

  async update(change: McpStoreChange, ledger: LedgerEntries): Promise<boolean> {
    const ok = await this.store.update(change, ledger);
    if (ok) this.watchers.changed(change.tenant);
    return ok;
  }

  get(tenant: string, id: string): Promise<McpServerRecord | undefined> {
    return this.store.get(tenant, id);
  }

  list(tenant: string): Promise<McpServerRecord[]> {
    return this.store.list(tenant);
  }

  listInStates(states: McpServerState[]): Promise<McpServerRecord[]> {
    return this.store.listInStates(states);
  }

  discovery(tenant: string, serverId: string): Promise<Discovery | undefined> {
    return this.store.discovery(tenant, serverId);
  }

  bindings(tenant: string, serverId: string): Promise<McpBinding[]> {
    return this.store.bindings(tenant, serverId);
  }

  binding(tenant: string, serverId: string, tool: string): Promise<McpBinding | undefined> {
    return this.store.binding(tenant, serverId, tool);
  }
}
