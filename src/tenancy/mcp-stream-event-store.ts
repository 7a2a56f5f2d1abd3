/**
 * How much of a session's event streams is kept for replay: a session's oldest events go first
 * once it holds more than `events` or more than `bytes`, and any event older than `ttlMs` is gone.
 */
export interface McpStreamLimits {
  events: number;
  bytes: number;
  ttlMs: number;
}

/** The default {@link McpStreamLimits}: 256 events, 1 MiB, 5 minutes per session. */
export const DEFAULT_MCP_STREAM_LIMITS: McpStreamLimits = {
  events: 256,
  bytes: 1024 * 1024,
  ttlMs: 5 * 60_000,
};

/** One kept event of a session's stream: its id (as the client got it) and JSON-RPC message. */
export interface McpStreamEvent {
  id: string;
  streamId: string;
  /** The message as JSON text; `{}` for a priming event. */
  message: string;
}

/**
 * The events sent on the agents' MCP sessions' streams, kept for a while (within limits) so a
 * client whose stream dropped may ask for what followed the last event it got (`Last-Event-ID`).
 * Every lookup is by session and event: one session's ids find nothing in another's.
 */
export interface McpStreamEventStore {
  /** Keeps an event of a session's stream; returns its id (unique in the session, rising). */
  append(sessionId: string, streamId: string, message: string): Promise<string>;
  /** The stream of the session's event `eventId`; undefined when unknown, expired or foreign. */
  streamOf(sessionId: string, eventId: string): Promise<string | undefined>;
  /** The session's kept events of the same stream after `eventId`, oldest first. */
  after(sessionId: string, eventId: string): Promise<McpStreamEvent[]>;
  /** Forgets a session's events (it ended). Safe to repeat. */
  drop(sessionId: string): Promise<void>;
}
