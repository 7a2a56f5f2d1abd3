import type { LedgerEntries } from '../core/index.js';
import type { Discovery, McpBinding } from './mcp-binding.js';
import type { McpServerRecord, McpServerState } from './mcp-server.js';

/** One atomic change of a server's records, written with its audit records and events. */
export interface McpStoreChange {
  tenant: string;
  serverId: string;
  /** The server's new record; written only when the stored version is `server.version - 1`. */
  server?: McpServerRecord;
  /** Replaces the server's discovery. */
  discovery?: Discovery;
  /** Inserted or replaced, keyed by server and tool. */
  bindings?: McpBinding[];
}

/** Persistence of upstream MCP servers, their discoveries and their bindings. */
export interface McpStore {
  /**
   * Adds a server with its ledger entries, atomically.
   * @returns false (nothing written) when a server of the tenant that is not retired has the same
   *   identity.
   */
  create(server: McpServerRecord, ledger: LedgerEntries): Promise<boolean>;
  /**
   * Applies a change with its ledger entries, atomically.
   * @returns false (nothing written) when `change.server` is given and the stored server changed.
   */
  update(change: McpStoreChange, ledger: LedgerEntries): Promise<boolean>;
  /** The server, if it exists in the tenant. */
  get(tenant: string, id: string): Promise<McpServerRecord | undefined>;
  /** A tenant's servers, oldest first. */
  list(tenant: string): Promise<McpServerRecord[]>;
  /** Servers of every tenant in the given states (for reconnecting at start and probing). */
  listInStates(states: McpServerState[]): Promise<McpServerRecord[]>;
  /** The server's last discovery, if it was ever verified. */
  discovery(tenant: string, serverId: string): Promise<Discovery | undefined>;
  /** The server's bindings, by tool name. */
  bindings(tenant: string, serverId: string): Promise<McpBinding[]>;
  /** One binding. */
  binding(tenant: string, serverId: string, tool: string): Promise<McpBinding | undefined>;
}
