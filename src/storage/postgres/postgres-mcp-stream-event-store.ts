import { sql } from 'kysely';
import { DEFAULT_MCP_STREAM_LIMITS } from '../../tenancy/index.js';
import type { McpStreamEvent, McpStreamEventStore, McpStreamLimits } from '../../tenancy/index.js';
import type { PostgresDatabase } from './postgres-database.js';

/** Appends between two sweeps of every session's expired events. */
const SWEEP_EVERY = 64;

/**
 * {@link McpStreamEventStore} on PostgreSQL, shared by every node: one row per event, its `seq`
 * the event id. Each append trims its session to the limits; every so often expired events of all
 * sessions go (a node that died left its sessions' events behind). Events are not part of the
 * write batches (they need no turn under the write lock): a failed append rejects on its own.
 */
export class PostgresMcpStreamEventStore implements McpStreamEventStore {
  private appends = 0;

  constructor(
    private readonly db: PostgresDatabase,
    private readonly limits: McpStreamLimits = DEFAULT_MCP_STREAM_LIMITS,
    private readonly now: () => number = Date.now,
  ) {}

  async append(sessionId: string, streamId: string, message: string): Promise<string> {
    const k = this.db.kysely;
    const row = await k
      .insertInto('mcp_stream_events')
      .values({
        session_id: sessionId,
        stream_id: streamId,
        message,
        bytes: Buffer.byteLength(message),
        created_ms: String(this.now()),
      })
      .returning('seq')
      .executeTakeFirstOrThrow();
    const cutoff = String(this.now() - this.limits.ttlMs);
    await sql`delete from mcp_stream_events where seq in (
        select seq from (
          select seq, created_ms,
            row_number() over w as n,
            sum(bytes) over w as b
          from mcp_stream_events where session_id = ${sessionId}
          window w as (order by seq desc)
        ) t
        where n > ${this.limits.events} or b > ${this.limits.bytes} or created_ms < ${cutoff}
      )`.execute(k);
    if (++this.appends % SWEEP_EVERY === 0)
      await k.deleteFrom('mcp_stream_events').where('created_ms', '<', cutoff).execute();
    return String(row.seq);
  }

  async streamOf(sessionId: string, eventId: string): Promise<string | undefined> {
    const seq = seqOf(eventId);
    if (seq === undefined) return undefined;
    const row = await this.db.kysely
      .selectFrom('mcp_stream_events')
      .select('stream_id')
      .where('session_id', '=', sessionId)
      .where('seq', '=', seq)
      .where('created_ms', '>=', String(this.now() - this.limits.ttlMs))
      .executeTakeFirst();
    return row?.stream_id;
  }

  async after(sessionId: string, eventId: string): Promise<McpStreamEvent[]> {
    const streamId = await this.streamOf(sessionId, eventId);
    if (streamId === undefined) return [];
    const rows = await this.db.kysely
      .selectFrom('mcp_stream_events')
      .select(['seq', 'stream_id', 'message'])
      .where('session_id', '=', sessionId)
      .where('stream_id', '=', streamId)
      .where('seq', '>', seqOf(eventId)!)
      .orderBy('seq')
      .execute();
    return rows.map((r) => ({ id: String(r.seq), streamId: r.stream_id, message: r.message }));
  }

  async drop(sessionId: string): Promise<void> {
    await this.db.kysely
      .deleteFrom('mcp_stream_events')
      .where('session_id', '=', sessionId)
      .execute();
  }
}

/** An event id as a `seq`; undefined for one that is not (a client's guess is simply unknown). */
function seqOf(eventId: string): string | undefined {
  return /^[1-9][0-9]{0,17}$/.test(eventId) ? eventId : undefined;
}
