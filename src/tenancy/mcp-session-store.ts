/** An agent's MCP session as the nodes of one database share it. */
export interface StoredMcpSession {
  /** The `Mcp-Session-Id` the session was given. */
  id: string;
  tenant: string;
  /** The agent principal that opened it. */
  principal: string;
  /** The id of the token it was opened with: only that token may use it. */
  tokenId: string;
  /** The params of the client's `initialize` request, replayed where the session is opened again. */
  initialize: unknown;
  /** ISO 8601 time it was opened. */
  createdAt: string;
}

/**
 * The MCP sessions of every node of one database, so an agent's next request may land on any
 * node. Absent where one gateway serves alone (sessions stay in its memory).
 */
export interface McpSessionStore {
  /** Stores a session just opened. Safe to repeat (the first stored wins). */
  put(session: StoredMcpSession): Promise<void>;
  /** The session with `id`, or undefined when it ended or never was. */
  get(id: string): Promise<StoredMcpSession | undefined>;
  /** Ends the session for every node. Safe to repeat. */
  delete(id: string): Promise<void>;
}
