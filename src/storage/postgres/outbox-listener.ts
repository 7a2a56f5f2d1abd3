import pg from 'pg';

/** The channel a transaction that adds outbox events notifies (at its commit). */
export const OUTBOX_CHANNEL = 'gatehouse_outbox';
/** How long to wait before listening again after the connection was lost. */
const RETRY_MS = 500;

/**
 * LISTEN on {@link OUTBOX_CHANNEL} over a connection of its own, so a node learns of the events
 * other nodes commit. A wake-up only: readers then read the outbox table, which is the truth, so
 * a notification lost while reconnecting delays events until the next one, never loses them.
 * Reconnects by itself until closed.
 */
export class OutboxListener {
  private client: pg.Client | undefined;
  private closed = false;
  private retry: NodeJS.Timeout | undefined;
  /** The connection was lost since it last listened. */
  private lost = false;

  constructor(
    private readonly url: string,
    private readonly onNotify: () => void,
  ) {}

  /** Starts listening; resolves once it listens (or once the first attempt failed). */
  async start(): Promise<void> {
    if (this.closed) return;
    const client = new pg.Client({ connectionString: this.url });
    this.client = client;
    const again = () => {
      if (this.client !== client) return;
      this.client = undefined;
      void client.end().catch(() => undefined);
      this.lost = true;
      if (this.closed || this.retry) return;
      this.retry = setTimeout(() => {
        this.retry = undefined;
        void this.start();
      }, RETRY_MS);
      this.retry.unref();
    };
    client.on('error', again);
    client.on('end', again);
    client.on('notification', () => this.onNotify());
    try {
      await client.connect();
      await client.query(`LISTEN ${OUTBOX_CHANNEL}`);
      if (this.lost) {
        // Events may have been committed while it was not listening.
        this.lost = false;
        this.onNotify();
      }
    } catch {
      again();
    }
  }

  /** Stops listening. Safe to call twice. */
  async close(): Promise<void> {
    this.closed = true;
    if (this.retry) clearTimeout(this.retry);
    const client = this.client;
    this.client = undefined;
    await client?.end().catch(() => undefined);
  }
}
