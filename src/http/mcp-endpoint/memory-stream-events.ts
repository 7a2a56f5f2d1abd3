import { DEFAULT_MCP_STREAM_LIMITS } from '../../tenancy/index.js';
import type { McpStreamEvent, McpStreamEventStore, McpStreamLimits } from '../../tenancy/index.js';

interface Kept extends McpStreamEvent {
  seq: number;
  bytes: number;
  at: number;
}

/**
 * {@link McpStreamEventStore} in this node's memory, for a gateway that serves alone (its sessions
 * live only in its memory too). Each session keeps its newest events within the limits.
 */
export class MemoryStreamEventStore implements McpStreamEventStore {
  private readonly sessions = new Map<string, { events: Kept[]; bytes: number }>();
  private seq = 0;

  constructor(
    private readonly limits: McpStreamLimits = DEFAULT_MCP_STREAM_LIMITS,
    private readonly now: () => number = Date.now,
  ) {}

  append(sessionId: string, streamId: string, message: string): Promise<string> {
    let s = this.sessions.get(sessionId);
    if (!s) this.sessions.set(sessionId, (s = { events: [], bytes: 0 }));
    const seq = ++this.seq;
    const e: Kept = {
      id: String(seq),
      seq,
      streamId,
      message,
      bytes: Buffer.byteLength(message),
      at: this.now(),
    };
    s.events.push(e);
    s.bytes += e.bytes;
    this.trim(s);
    return Promise.resolve(e.id);
  }

  streamOf(sessionId: string, eventId: string): Promise<string | undefined> {
    return Promise.resolve(this.find(sessionId, eventId)?.streamId);
  }

  after(sessionId: string, eventId: string): Promise<McpStreamEvent[]> {
    const last = this.find(sessionId, eventId);
    const events = this.sessions.get(sessionId)?.events ?? [];
    return Promise.resolve(
      last
        ? events
            .filter((e) => e.seq > last.seq && e.streamId === last.streamId)
            .map(({ id, streamId, message }) => ({ id, streamId, message }))
        : [],
    );
  }

  drop(sessionId: string): Promise<void> {
    this.sessions.delete(sessionId);
    return Promise.resolve();
  }

  private find(sessionId: string, eventId: string): Kept | undefined {
    const s = this.sessions.get(sessionId);
    if (!s) return undefined;
    this.trim(s);
    return s.events.find((e) => e.id === eventId);
  }

  /** Drops the session's expired events, then its oldest while over a limit. */
  private trim(s: { events: Kept[]; bytes: number }): void {
    const cutoff = this.now() - this.limits.ttlMs;
    while (
      s.events.length > 0 &&
      (s.events[0]!.at < cutoff ||
        s.events.length > this.limits.events ||
        s.bytes > this.limits.bytes)
    ) {
      s.bytes -= s.events.shift()!.bytes;
    }
  }
}
