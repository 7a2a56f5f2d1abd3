/** Bounds of `/v1/events/stream`. */
export interface StreamLimits {
  /** Open streams on this gateway at most (503 beyond). */
  maxClients: number;
  /** Open streams of one tenant at most (429 beyond). */
  maxClientsPerTenant: number;
  /** Open streams of one principal at most (429 beyond). */
  maxClientsPerPrincipal: number;
  /**
   * Bytes a client may leave unread in the gateway; a client further behind is closed (it resumes
   * with `Last-Event-ID`: the outbox keeps every event). One event larger than this is still sent
   * to a client that has read everything before it.
   */
  bufferBytes: number;
  /** A comment line is sent this often, so proxies and clients see the stream alive. */
  heartbeatMs: number;
  /** A client that takes none of what waits for it for this long is closed. */
  stallMs: number;
}

/** The defaults: hundreds of idle readers, each able to fall a few hundred events behind. */
export const DEFAULT_STREAM_LIMITS: StreamLimits = {
  maxClients: 256,
  maxClientsPerTenant: 128,
  maxClientsPerPrincipal: 32,
  bufferBytes: 256 * 1024,
  heartbeatMs: 15_000,
  stallMs: 60_000,
};

/** Why a stream was closed by the gateway. */
export type StreamDropReason = 'behind' | 'stalled' | 'failed';

/** What the hub reports, for `/metrics`. */
export interface StreamMetrics {
  /** A stream the gateway closed, and why. */
  streamDropped(reason: StreamDropReason): void;
}

/** Who a stream is for, beyond its principal's tenant. */
export interface StreamScope {
  /** The only principal whose events the stream carries (an agent's own); null: the tenant's. */
  owner: string | null;
  /**
   * Watches what the stream was opened with (its token): calls `stop` once when that stops
   * working, and returns the unwatch, called when the stream closes. Absent: nothing is watched.
   */
  watch?: (stop: () => void) => () => void;
}
