import { ResourceLifecycle } from '../../core/index.js';
import type { McpServerRecord } from '../mcp-server.js';
import { UpstreamConnection } from './connection.js';
import type { ConnectionCredentials, StdioLauncher, UpstreamNotice } from './connection-options.js';
import type { PinnedFetch } from '../../egress/index.js';

/** Options of the {@link UpstreamPool}. */
export interface UpstreamPoolOptions {
  connectTimeoutMs: number;
  maxMessageBytes: number;
  /** Where `maxMessageBytes` is set, named in the error of a message over it. */
  maxMessageBytesSetting?: string;
  /** First wait before reconnecting after a failed attempt; doubles up to `maxBackoffMs`. */
  baseBackoffMs: number;
  maxBackoffMs: number;
  /** Called when a server says its lists changed. */
  onListChanged: (server: McpServerRecord) => void;
  /** Called with what a server tells outside any call (log messages, resource updates). */
  onNotice?: (server: McpServerRecord, notice: UpstreamNotice) => void;
  /**
   * Called when the server may be gone, so it should be probed soon: a connection ended that the
   * pool did not close (the process died, the peer hung up, the HTTP session is gone), or a
   * request or stream of an HTTP connection failed. Never for a connection whose handshake did
   * not complete (that is a failed attempt `get` throws).
   */
  onLost?: (server: McpServerRecord) => void;
  /**
   * Called when a connection to the server opened (the first, or one after a lost one): what was
   * asked of the previous one (subscriptions, log level) is not known to this one.
   */
  onConnected?: (server: McpServerRecord) => void;
  now: () => number;
  /**
   * Issues the credentials a server's transport declares, for one connection (null when it
   * declares none). @throws the broker's error; no connection is made then.
   */
  credentials?: (server: McpServerRecord) => Promise<ConnectionCredentials | null>;
  /** Prepares stdio servers' processes (in a sandbox lease); absent: they run directly. */
  launch?: (server: McpServerRecord) => StdioLauncher | undefined;
  /**
   * Authorizes egress to an HTTP server for one connection and returns the fetch to use.
   * @throws Error saying why egress is refused; no credentials are issued and nothing is sent then.
   */
  connectHttp?: (url: URL) => Promise<PinnedFetch>;
}

/**
 * Thrown by {@link UpstreamPool.get} while a reconnect waits out its backoff: no attempt was made,
 * so it says nothing new about the server. `retryInMs` is when the next attempt may be made.
 */
export class BackingOff extends Error {
  constructor(
    readonly attempts: number,
    readonly retryInMs: number,
  ) {
    super(`reconnecting after ${attempts} failed attempts; next try in ${retryInMs} ms`);
    this.name = 'BackingOff';
  }
}

interface Entry {
  conn: UpstreamConnection | null;
  opening: Promise<UpstreamConnection> | null;
  /** Failed attempts in a row. */
  attempts: number;
  nextAttemptAt: number;
}

/** A connection from the pool, and whether it was just made (so discovery must run again). */
interface PooledConnection {
  conn: UpstreamConnection;
  fresh: boolean;
}

/**
 * One MCP client per server: opened on first use, reopened with exponential backoff after it is
 * lost, closed (and its process reaped) on `release()` and `close()`.
 */
export class UpstreamPool {
  private readonly entries = new Map<string, Entry>();
  private readonly state = new ResourceLifecycle('the upstream pool');

  constructor(private readonly options: UpstreamPoolOptions) {}

  /**
   * The server's connection, opening it when there is none.
   * @throws BackingOff while a reconnect is backing off (no attempt is made then); Error when the
   *   connection cannot be opened (an attempt that failed: the backoff grows).
   */
  async get(server: McpServerRecord): Promise<PooledConnection> {
    if (!this.state.isOpen) throw new Error('the gateway is shutting down');
    let e = this.entries.get(server.id);
    if (!e) {
      e = { conn: null, opening: null, attempts: 0, nextAttemptAt: 0 };
      this.entries.set(server.id, e);
    }
    if (e.conn && !e.conn.isClosed) return { conn: e.conn, fresh: false };
    if (e.opening) return { conn: await e.opening, fresh: false };
    const wait = Math.ceil(e.nextAttemptAt - this.options.now());
    if (wait > 0) throw new BackingOff(e.attempts, wait);
    const entry = e;
    entry.opening = this.open(server, entry);
    try {
      const conn = await entry.opening;
      if (!this.state.isOpen || this.entries.get(server.id) !== entry) {
        await conn.close();
        throw new Error('the server was released while connecting');
      }
      entry.conn = conn;
      entry.attempts = 0;
      entry.nextAttemptAt = 0;
      this.options.onConnected?.(server);
      return { conn, fresh: true };
    } catch (err) {
      entry.attempts += 1;
      entry.nextAttemptAt =
        this.options.now() +
        Math.min(this.options.baseBackoffMs * 2 ** (entry.attempts - 1), this.options.maxBackoffMs);
      throw err;
    } finally {
      entry.opening = null;
    }
  }

  private async open(server: McpServerRecord, entry: Entry): Promise<UpstreamConnection> {
    // Egress first: no credentials are issued for an upstream the allow-list refuses.
    const fetch =
      server.transport.type === 'http'
        ? await this.options.connectHttp?.(new URL(server.transport.url))
        : undefined;
    let credentials: ConnectionCredentials | null;
    try {
      credentials = (await this.options.credentials?.(server)) ?? null;
    } catch (err) {
      fetch?.close();
      throw err;
    }
    const launch = this.options.launch?.(server);
    const current = () => this.state.isOpen && this.entries.get(server.id) === entry;
    return UpstreamConnection.open({
      transport: server.transport,
      connectTimeoutMs: this.options.connectTimeoutMs,
      maxMessageBytes: this.options.maxMessageBytes,
      ...(this.options.maxMessageBytesSetting === undefined
        ? {}
        : { maxMessageBytesSetting: this.options.maxMessageBytesSetting }),
      onListChanged: () => this.options.onListChanged(server),
      onNotice: (notice) => {
        if (current()) this.options.onNotice?.(server, notice);
      },
      onClosed: () => {
        if (entry.conn?.isClosed) entry.conn = null;
        if (current()) this.options.onLost?.(server);
      },
      onTransportError: () => {
        if (current()) this.options.onLost?.(server);
      },
      ...(credentials ? { credentials } : {}),
      ...(launch ? { launch } : {}),
      ...(fetch ? { fetch } : {}),
    });
  }

  /**
   * True when the server is known to be unreachable now: it has no open connection, none is being
   * opened, and the last attempt failed (so calls fail fast until a reconnect succeeds).
   */
  unreachable(serverId: string): boolean {
    const e = this.entries.get(serverId);
    if (!e || e.opening || e.attempts === 0) return false;
    return !e.conn || e.conn.isClosed;
  }

  /** The open connection of a server, if any (no connecting). */
  peek(serverId: string): UpstreamConnection | null {
    const c = this.entries.get(serverId)?.conn;
    return c && !c.isClosed ? c : null;
  }

  /** Closes the server's connection (a stdio process is killed) but keeps its backoff state. */
  async drop(serverId: string): Promise<void> {
    const e = this.entries.get(serverId);
    const c = e?.conn;
    if (e) e.conn = null;
    await c?.close();
  }

  /** Closes the server's connection and forgets it. Safe to repeat. */
  async release(serverId: string): Promise<void> {
    const e = this.entries.get(serverId);
    this.entries.delete(serverId);
    await e?.conn?.close();
    if (e?.opening) await e.opening.then((c) => c.close()).catch(() => undefined);
  }

  /** Closes every connection; no process outlives this. Safe to repeat. */
  close(): Promise<void> {
    return this.state.close(async () => {
      await Promise.all([...this.entries.keys()].map((id) => this.release(id)));
    });
  }
}
