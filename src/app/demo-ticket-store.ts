import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { writeFileAtomic } from '../audit/index.js';
import type { DemoTicket } from './demo-ticket-board.js';

/** At most this many tickets; the oldest closed ones go first when it is reached. */
const MAX_TICKETS = 1000;
/** At most this many remembered Idempotency-Keys; the oldest are forgotten first. */
const MAX_KEYS = 1000;

interface StoredState {
  /** The loopback port the service listens on, kept so the published tools stay right. */
  port: number;
  /** The bearer key of the REST API (the broker holds it as the secret `tickets-api-key`). */
  apiKey: string;
  /** The password of user `demo` on the pages (the secret `tickets-password`). */
  password: string;
  next: number;
  tickets: DemoTicket[];
  /** Idempotency-Key → the ticket its first request opened, oldest first. */
  keys: [string, string][];
}

/** Why a ticket operation was refused, with the HTTP status that says it. */
export class TicketRefusal extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

/**
 * The demo ticket service's state, kept in one JSON file in the data directory (written whole,
 * atomically, after each change) so tickets, the port and the credentials survive a restart.
 */
export class DemoTicketStore {
  private writing: Promise<void> = Promise.resolve();

  private constructor(
    private readonly file: string,
    private readonly state: StoredState,
  ) {}

  /** Reads the state file, or starts a fresh state with new credentials and no port yet. */
  static open(file: string): DemoTicketStore {
    const state: StoredState = existsSync(file)
      ? (JSON.parse(readFileSync(file, 'utf8')) as StoredState)
      : {
          port: 0,
          apiKey: `tk-${randomBytes(18).toString('base64url')}`,
          password: `pw-${randomBytes(12).toString('base64url')}`,
          next: 1,
          tickets: [],
          keys: [],
        };
    return new DemoTicketStore(file, state);
  }

  get port(): number {
    return this.state.port;
  }

  get apiKey(): string {
    return this.state.apiKey;
  }

  get password(): string {
    return this.state.password;
  }

  /** Remembers the port the service got (written with the next save). */
  async keepPort(port: number): Promise<void> {
    if (this.state.port === port) return;
    this.state.port = port;
    await this.save();
  }

  /** Tickets newest first, optionally only those in one state. */
  list(status?: string): DemoTicket[] {
    return this.state.tickets.filter((t) => status === undefined || t.status === status).reverse();
  }

  get(id: string): DemoTicket | undefined {
    return this.state.tickets.find((t) => t.id === id);
  }

  /**
   * Opens a ticket; with an Idempotency-Key seen before, answers the ticket that key opened.
   * @returns the ticket, and whether this request opened it
   */
  async create(
    input: { title?: unknown; body?: unknown },
    key?: string,
  ): Promise<{ ticket: DemoTicket; created: boolean }> {
    const earlier = key === undefined ? undefined : this.state.keys.find(([k]) => k === key);
    const opened = earlier && this.get(earlier[1]);
    if (opened) return { ticket: opened, created: false };
    const { title, body } = input;
    if (typeof title !== 'string' || title.trim() === '' || title.length > 200)
      throw new TicketRefusal(422, 'title must be a non-empty string of at most 200 characters');
    if (body !== undefined && (typeof body !== 'string' || body.length > 5000))
      throw new TicketRefusal(422, 'body must be a string of at most 5000 characters');
    const ticket: DemoTicket = {
      id: `T-${this.state.next++}`,
      title,
      ...(body ? { body } : {}),
      status: 'open',
      createdAt: new Date().toISOString(),
    };
    this.state.tickets.push(ticket);
    if (this.state.tickets.length > MAX_TICKETS) {
      const oldest = this.state.tickets.findIndex((t) => t.status === 'closed');
      this.state.tickets.splice(oldest === -1 ? 0 : oldest, 1);
    }
    if (key !== undefined) {
      this.state.keys.push([key, ticket.id]);
      if (this.state.keys.length > MAX_KEYS) this.state.keys.shift();
    }
    await this.save();
    return { ticket, created: true };
  }

  /** Closes an open ticket. */
  async close(id: string): Promise<DemoTicket> {
    const ticket = this.get(id);
    if (!ticket) throw new TicketRefusal(404, `no ticket ${id}`);
    if (ticket.status === 'closed') throw new TicketRefusal(409, `${id} is closed already`);
    ticket.status = 'closed';
    ticket.closedAt = new Date().toISOString();
    await this.save();
    return ticket;
  }

  /** Waits for the writes begun so far. */
  flushed(): Promise<void> {
    return this.writing;
  }

  private save(): Promise<void> {
    const text = `${JSON.stringify(this.state)}\n`;
    this.writing = this.writing.then(() => writeFileAtomic(this.file, text, 0o600));
    return this.writing;
  }
}
