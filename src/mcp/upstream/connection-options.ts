import type { OriginBoundHeader } from '../../core/index.js';
import type { BrokeredValue } from '../../secrets/index.js';
import type { McpTransport } from '../mcp-server.js';
import type { ChildStdioOptions } from './child-stdio-transport.js';
import type { PinnedFetch } from '../../egress/index.js';

/** Options of {@link UpstreamConnection.open}. */
export interface UpstreamConnectionOptions {
  transport: McpTransport;
  /** Called when the server says its tools, resources or prompts changed. */
  onListChanged: () => void;
  /**
   * Called with what the server tells outside any call: a log message (its `data` redacted of the
   * connection's credentials and known secret shapes) or a resource update.
   */
  onNotice?: (notice: UpstreamNotice) => void;
  /**
   * Called once when an open connection ends other than by `close()`: the process died, the peer
   * hung up, the HTTP server said the session is gone. Not for a connection whose handshake never
   * completed (`open` throws then).
   */
  onClosed: () => void;
  /**
   * Called when a request or stream of an open HTTP connection failed (refused, reset, an HTTP
   * error, the server's event stream ended) and the connection stays open: the server may be gone
   * or one request may have failed; a probe decides. Not during the handshake or after `close()`.
   */
  onTransportError?: (err: unknown) => void;
  /** Milliseconds the handshake may take. */
  connectTimeoutMs: number;
  /** Largest single message accepted from the server (stdio or HTTP); a bigger one ends the connection. */
  maxMessageBytes: number;
  /** Where `maxMessageBytes` is set, named in the error of a message over it. */
  maxMessageBytesSetting?: string;
  /** Credentials issued for this connection (hold values: never log or store them). */
  credentials?: ConnectionCredentials;
  /**
   * Prepares a stdio server's process elsewhere (a sandbox lease): given the command and its whole
   * environment, the spawn to make and what to release when the process is gone. Null: spawn it
   * directly, as the gateway's user.
   */
  launch?: StdioLauncher;
  /**
   * The fetch an HTTP server's requests go through (one the egress check pinned to the addresses
   * it authorized); the connection owns it and closes it when it ends. Absent: the global fetch.
   */
  fetch?: PinnedFetch;
}

/** A prepared spawn of a stdio server, and how to give back what it holds. */
export interface LaunchedStdio {
  spawn: Omit<ChildStdioOptions, 'maxBufferSize' | 'cwd'>;
  /** Called once when the process is gone (release the lease, remove the workspace). */
  release: () => Promise<void>;
}

/** Prepares the spawn of a stdio server; null when it runs directly. */
export type StdioLauncher = (
  transport: Extract<McpTransport, { type: 'stdio' }>,
  env: Record<string, string>,
) => Promise<LaunchedStdio | null>;

/** What the broker issued for one connection, and how to end those leases. */
export interface ConnectionCredentials {
  /** Environment variables added to a stdio server's process. */
  env: Record<string, string>;
  /**
   * Headers added to an HTTP server's requests, each only to requests to the exact origin it is
   * bound to; `origin` absent means every request.
   */
  headers: OriginBoundHeader[];
  /** Every issued value, for the sanitizer of calls through this connection. */
  values: BrokeredValue[];
  /** Ends the leases; called once when the connection is over, however it ended. */
  release: () => Promise<void>;
}

/** What an upstream server tells the gateway outside any call. */
export type UpstreamNotice =
  | {
      kind: 'message';
      /** `notifications/message` params: level, data (redacted), optional logger. */
      params: { level: LoggingLevel; data: unknown; logger?: string };
    }
  | { kind: 'resource-updated'; uri: string };

/** The MCP log levels, least severe first (RFC 5424 severities). */
export const LOGGING_LEVELS = [
  'debug',
  'info',
  'notice',
  'warning',
  'error',
  'critical',
  'alert',
  'emergency',
] as const;
/** One MCP log level. */
export type LoggingLevel = (typeof LOGGING_LEVELS)[number];
