import type { ServerResponse } from 'node:http';
import type { FastifyReply } from 'fastify';
import { ErrorCode, GatehouseError } from '../core/index.js';
import type { OutboxFeed, StoredEvent } from '../core/index.js';
import type { Principal } from '../tenancy/index.js';
import { socketProgress } from './server-limits.js';
import type {
  StreamLimits,
  StreamMetrics,
  StreamScope,
  StreamDropReason,
} from './event-stream-limits.js';

/** Options of {@link EventStreamHub}. */
export interface EventStreamHubOptions {
  feed: OutboxFeed;
  limits: StreamLimits;
  metrics?: StreamMetrics;
  /** Told of a failure of the shared read (its clients are closed and resume). */
  onError?: (err: unknown) => void;
}

interface Frame {
  seq: number;
  text: string;
  bytes: number;
}

interface Client {
  tenant: string;
  principal: string;
  /** The only owner whose events are sent; null: every event of the tenant. */
  owner: string | null;
  res: ServerResponse;
  /** The id of the last event written to it. */
  last: number;
  /** Events that arrived while it reads the backlog; null once it is live. */
  pending: Frame[] | null;
  pendingBytes: number;
  closed: boolean;
  /** Stall watch: the socket's progress at the last heartbeat, and since when it has not moved. */
  written: number;
  stuckSince: number | null;
  /** Wakes a backlog read waiting for the client's buffer to drain. */
  wake: (() => void) | null;
  /** Ends the watch of the stream's token. */
  unwatch: () => void;
}

const BATCH = 500;

/**
 * The event streams of one gateway: one shared read of the outbox after each commit, fanned out
 * to every client of the event's tenant, each frame serialized once. A client first reads its
 * backlog (from `Last-Event-ID`) at its own pace, with what happens meanwhile queued, then goes
 * live. No client can make the gateway hold more than `bufferBytes` for it: one that falls
 * further behind, or takes nothing for `stallMs`, is closed and resumes where it stopped. A stream
 * scoped to an owner skips every other event; one whose token stops working is ended.
 */
export class EventStreamHub {
  private readonly clients = new Set<Client>();
  private readonly byTenant = new Map<string, Set<Client>>();
  private readonly byPrincipal = new Map<string, number>();
  /** Position the shared read has dispatched through; null while no client is open. */
  private cursor: number | null = null;
  private starting: Promise<void> | null = null;
  /** Bumped when the last client leaves, so a read begun before does not move the cursor. */
  private epoch = 0;
  private reading = false;
  private again = false;
  private unsubscribe: (() => void) | null = null;
  private heartbeat: NodeJS.Timeout | null = null;
  /** Told of every event the shared read dispatches (see {@link listen}). */
  private readonly listeners = new Set<(e: StoredEvent) => void>();

  constructor(private readonly options: EventStreamHubOptions) {}

  /** Open streams now. */
  get size(): number {
    return this.clients.size;
  }

  /**
   * Takes over `reply` and serves one stream on it, starting after event `after` (undefined:
   * after the tenant's latest), carrying what `scope` lets it. Resolves once the client is live or
   * gone; the stream then runs until the client or the hub closes it, or its token stops working.
   * @throws GatehouseError QUOTA_EXCEEDED (429) or CAPACITY_EXHAUSTED (503) when a cap is reached,
   *   before the reply is taken over, so the refusal is answered as any error.
   */
  async serve(
    principal: Principal,
    reply: FastifyReply,
    after: number | undefined,
    scope: StreamScope = { owner: null },
  ): Promise<void> {
    const res = reply.raw;
    const c = this.admit(principal, scope.owner, res);
    if (scope.watch) {
      const unwatch = scope.watch(() => this.revoked(c));
      // The token may have stopped working on the spot, which closed the client already.
      if (c.closed) unwatch();
      else c.unwatch = unwatch;
    }
    reply.hijack();
    try {
      await this.start();
      c.last = after ?? (await this.options.feed.latest(c.tenant));
      if (c.closed) return;
      res.writeHead(200, {
        'content-type': 'text/event-stream; charset=utf-8',
        'cache-control': 'no-cache',
        connection: 'keep-alive',
        'x-accel-buffering': 'no',
      });
      res.write(`retry: 2000\n: stream of tenant ${c.tenant} after event ${c.last}\n\n`);
      await this.catchUp(c);
    } catch (err) {
      this.drop(c, 'failed');
      this.options.onError?.(err);
    }
  }

  /** The id of the latest event of any tenant, or 0: no stream can resume after a larger one. */
  head(): Promise<number> {
    return this.options.feed.head();
  }

  /**
   * Calls `listener` with each event committed from now on, of every tenant, from the same shared
   * read as the streams (the hub reads while it has a stream or a listener); returns the removal.
   * A listener that throws is reported to `onError` and stays.
   */
  listen(listener: (e: StoredEvent) => void): () => void {
    this.listeners.add(listener);
    if (this.listeners.size === 1 && this.clients.size === 0) this.begin();
    return () => {
      if (this.listeners.delete(listener) && this.listeners.size === 0 && this.clients.size === 0)
        this.end();
    };
  }

  /** Closes every stream and stops reading. Safe to call twice. */
  close(): void {
    for (const c of this.clients) this.remove(c, () => c.res.end());
  }

  private admit(principal: Principal, owner: string | null, res: ServerResponse): Client {
    const { maxClients, maxClientsPerTenant, maxClientsPerPrincipal } = this.options.limits;
    const tenantCount = this.byTenant.get(principal.tenant)?.size ?? 0;
    const principalCount = this.byPrincipal.get(principal.id) ?? 0;
    if (principalCount >= maxClientsPerPrincipal)
      throw quota(
        `You have ${principalCount} event streams open, your limit: close one (each tab or client holds one) and retry.`,
        'principal',
        maxClientsPerPrincipal,
      );
    if (tenantCount >= maxClientsPerTenant)
      throw quota(
        `Tenant ${principal.tenant} has ${tenantCount} event streams open, its limit: close one and retry.`,
        'tenant',
        maxClientsPerTenant,
      );
    if (this.clients.size >= maxClients)
      throw new GatehouseError(
        ErrorCode.CAPACITY_EXHAUSTED,
        `This gateway serves ${maxClients} event streams at most and all are open; retry in a while.`,
        { details: { scope: 'gateway', limit: maxClients } },
      );
    const c: Client = {
      tenant: principal.tenant,
      principal: principal.id,
      owner,
      res,
      last: 0,
      pending: [],
      pendingBytes: 0,
      closed: false,
      written: 0,
      stuckSince: null,
      wake: null,
      unwatch: () => undefined,
    };
    this.clients.add(c);
    let mine = this.byTenant.get(c.tenant);
    if (!mine) this.byTenant.set(c.tenant, (mine = new Set()));
    mine.add(c);
    this.byPrincipal.set(c.principal, principalCount + 1);
    res.on('close', () => this.remove(c));
    if (this.clients.size === 1 && this.listeners.size === 0) this.begin();
    return c;
  }

  /** Writes the backlog at the client's pace, then what was queued meanwhile, then goes live. */
  private async catchUp(c: Client): Promise<void> {
    for (;;) {
      const batch = await this.options.feed.after(c.tenant, c.last, BATCH);
      for (const e of batch) {
        if (c.closed) return;
        if (e.seq <= c.last) continue;
        if (!carries(c, e)) {
          c.last = e.seq;
          continue;
        }
        c.res.write(frameOf(e).text);
        c.last = e.seq;
        if (c.res.writableLength >= this.options.limits.bufferBytes && !(await drained(c))) return;
      }
      if (c.closed || batch.length < BATCH) break;
    }
    if (c.closed || !c.pending) return;
    for (const f of c.pending) {
      if (f.seq <= c.last) continue;
      c.res.write(f.text);
      c.last = f.seq;
    }
    c.pending = null;
    c.pendingBytes = 0;
  }

  /** The first client or listener arrived: learn where the outbox stands, listen for commits, beat. */
  private begin(): void {
    const epoch = this.epoch;
    this.unsubscribe = this.options.feed.subscribe(() => void this.pump());
    this.heartbeat = setInterval(() => this.beat(), this.options.limits.heartbeatMs);
    this.heartbeat.unref();
    this.starting = this.options.feed.head().then((head) => {
      if (this.epoch === epoch) this.cursor = head;
    });
  }

  private start(): Promise<void> {
    return this.starting ?? Promise.resolve();
  }

  /** Reads what was committed since the cursor, for every tenant at once, and fans it out. */
  private async pump(): Promise<void> {
    if (this.reading) {
      this.again = true;
      return;
    }
    this.reading = true;
    try {
      do {
        this.again = false;
        let batch: StoredEvent[] = [];
        do {
          const epoch = this.epoch;
          if (this.cursor === null) return;
          batch = await this.options.feed.since(this.cursor, BATCH);
          if (epoch !== this.epoch) return;
          for (const e of batch) {
            this.dispatch(e);
            this.cursor = e.seq;
          }
        } while (batch.length === BATCH);
      } while (this.again);
    } catch (err) {
      // The clients resume from what they got; the next commit reads again.
      for (const c of this.clients) this.drop(c, 'failed');
      this.options.onError?.(err);
    } finally {
      this.reading = false;
    }
  }

  // The loops over clients iterate the sets themselves: a client removed during the loop is
  // simply not visited (deleting from a Set while iterating it is safe).
  private dispatch(e: StoredEvent): void {
    for (const l of this.listeners) {
      try {
        l(e);
      } catch (err) {
        this.options.onError?.(err);
      }
    }
    const clients = this.byTenant.get(e.tenant);
    if (!clients) return;
    let frame: Frame | undefined;
    const bound = this.options.limits.bufferBytes;
    for (const c of clients) {
      if (e.seq <= c.last || !carries(c, e)) continue;
      frame ??= frameOf(e);
      if (c.pending) {
        c.pending.push(frame);
        c.pendingBytes += frame.bytes;
        if (c.pendingBytes > bound && c.pending.length > 1) this.drop(c, 'behind');
        continue;
      }
      const waiting = c.res.writableLength;
      if (waiting > 0 && waiting + frame.bytes > bound) {
        this.drop(c, 'behind');
        continue;
      }
      c.res.write(frame.text);
      c.last = e.seq;
    }
  }

  /** Keeps streams alive and closes those whose reader took nothing for `stallMs`. */
  private beat(): void {
    const now = Date.now();
    for (const c of this.clients) {
      const written = socketProgress(c.res.socket);
      if (c.res.writableLength > 0 && written === c.written) {
        c.stuckSince ??= now;
        if (now - c.stuckSince >= this.options.limits.stallMs) {
          this.drop(c, 'stalled');
          continue;
        }
      } else c.stuckSince = null;
      c.written = written;
      if (c.res.headersSent && c.res.writableLength < this.options.limits.bufferBytes)
        c.res.write(': keepalive\n\n');
    }
  }

  /** The stream's token stopped working (revoked, rotated out, expired): end it, saying why. */
  private revoked(c: Client): void {
    this.remove(c, () =>
      c.res.headersSent
        ? c.res.end(': closed: the token of this stream was revoked or expired\n\n')
        : c.res.destroy(),
    );
  }

  /** Closes a client the gateway gave up on. */
  private drop(c: Client, reason: StreamDropReason): void {
    if (c.closed) return;
    this.options.metrics?.streamDropped(reason);
    this.remove(c, () => c.res.destroy());
  }

  private remove(c: Client, end?: () => void): void {
    if (c.closed) return;
    c.closed = true;
    c.pending = null;
    c.unwatch();
    this.clients.delete(c);
    const mine = this.byTenant.get(c.tenant);
    mine?.delete(c);
    if (mine?.size === 0) this.byTenant.delete(c.tenant);
    const n = (this.byPrincipal.get(c.principal) ?? 1) - 1;
    if (n > 0) this.byPrincipal.set(c.principal, n);
    else this.byPrincipal.delete(c.principal);
    end?.();
    c.wake?.();
    if (this.clients.size === 0 && this.listeners.size === 0) this.end();
  }

  /** The last client and listener left: stop reading until the next one comes. */
  private end(): void {
    this.epoch += 1;
    this.cursor = null;
    this.starting = null;
    this.unsubscribe?.();
    this.unsubscribe = null;
    if (this.heartbeat) clearInterval(this.heartbeat);
    this.heartbeat = null;
  }
}

/** Whether the client's stream carries the event: every one, or its owner's only. */
function carries(c: Client, e: StoredEvent): boolean {
  return c.owner === null || e.owner === c.owner;
}

/** One event as a server-sent event. */
function frameOf(e: StoredEvent): Frame {
  const text = `id: ${e.seq}\nevent: ${e.type}\ndata: ${JSON.stringify({ id: e.seq, type: e.type, subject: e.subject, at: e.at, data: e.data })}\n\n`;
  return { seq: e.seq, text, bytes: Buffer.byteLength(text) };
}

/** Resolves true once the client's buffer drained, false once it closed. */
function drained(c: Client): Promise<boolean> {
  return new Promise((resolve) => {
    if (c.closed) return resolve(false);
    const done = () => {
      c.wake = null;
      c.res.off('drain', done);
      resolve(!c.closed);
    };
    c.wake = done;
    c.res.on('drain', done);
  });
}

function quota(message: string, scope: 'principal' | 'tenant', limit: number): GatehouseError {
  return new GatehouseError(ErrorCode.QUOTA_EXCEEDED, message, { details: { scope, limit } });
}
