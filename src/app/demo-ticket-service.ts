import { randomBytes, timingSafeEqual } from 'node:crypto';
import { createServer } from 'node:http';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import {
  boardPage,
  loginPage,
  newTicketPage,
  notFoundPage,
  ticketPage,
} from './demo-ticket-board.js';
import type { PageState } from './demo-ticket-board.js';
import { DemoTicketStore, TicketRefusal } from './demo-ticket-store.js';
import { demoTicketsOpenApi } from './demo-tickets-openapi.js';

/** The largest request body the service reads. */
const MAX_BODY_BYTES = 64 * 1024;
/** At most this many signed-in page sessions; the oldest end first. */
const MAX_SESSIONS = 100;
const SECURITY_HEADERS = {
  'content-security-policy': "default-src 'self'; style-src 'unsafe-inline'",
  'x-content-type-options': 'nosniff',
};

/**
 * The demo's ticket service on loopback: a REST API under `/api` (bearer key; its OpenAPI
 * document at `/openapi.json`, which the demo imports as `tickets/*` tools) and a ticket board of
 * plain HTML pages with a sign-in form and a new-ticket form, for browser tools. It keeps its
 * state and its port in `DATA/demo-tickets.json`, so the published tools stay right across
 * restarts.
 */
export class DemoTicketService {
  private readonly sessions = new Set<string>();

  private constructor(
    private readonly server: Server,
    readonly store: DemoTicketStore,
    /** `http://127.0.0.1:PORT`. */
    readonly url: string,
  ) {}

  /** `127.0.0.1:PORT`, as the egress allow-list names it. */
  get address(): string {
    return new URL(this.url).host;
  }

  /**
   * Starts the service on the port it had before (a free one the first time).
   * @throws when that port is taken now, naming it and the file that keeps it
   */
  static async start(dataDir: string): Promise<DemoTicketService> {
    const file = join(dataDir, 'demo-tickets.json');
    const store = DemoTicketStore.open(file);
    const self: { service?: DemoTicketService } = {};
    const server = createServer((req, res) => {
      void self.service!.handle(req, res).catch((err: unknown) => {
        if (res.headersSent) return res.destroy();
        if (err instanceof TicketRefusal) return send(res, err.status, { message: err.message });
        send(res, 500, { message: (err as Error).message });
      });
    });
    server.requestTimeout = 30_000;
    server.headersTimeout = 10_000;
    await new Promise<void>((resolve, reject) => {
      server.once('error', (err: NodeJS.ErrnoException) =>
        reject(
          err.code === 'EADDRINUSE'
            ? new Error(
                `the demo ticket service cannot listen on 127.0.0.1:${store.port} again (in use); the published tickets/* tools name that port (is another gateway running on this data directory?). Free it, or remove ${file} and the data directory to start the demo afresh`,
                { cause: err },
              )
            : err,
        ),
      );
      server.listen(store.port, '127.0.0.1', () => resolve());
    });
    const port = (server.address() as AddressInfo).port;
    await store.keepPort(port);
    self.service = new DemoTicketService(server, store, `http://127.0.0.1:${port}`);
    return self.service;
  }

  /** Stops listening and closes open connections; waits for the last write. */
  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
    await this.store.flushed();
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', this.url);
    const path = url.pathname;
    const method = req.method ?? 'GET';
    if (path === '/openapi.json' && method === 'GET')
      return send(res, 200, demoTicketsOpenApi(this.url));
    if (path.startsWith('/api/')) return this.api(req, res, method, path, url);
    return this.pages(req, res, method, path);
  }

  private async api(
    req: IncomingMessage,
    res: ServerResponse,
    method: string,
    path: string,
    url: URL,
  ): Promise<void> {
    if (!sameSecret(req.headers.authorization ?? '', `Bearer ${this.store.apiKey}`))
      return send(res, 401, { message: 'send Authorization: Bearer <the tickets API key>' });
    try {
      if (path === '/api/tickets' && method === 'GET') {
        const status = url.searchParams.get('status') ?? undefined;
        if (status !== undefined && status !== 'open' && status !== 'closed')
          throw new TicketRefusal(422, 'status must be open or closed');
        return send(res, 200, this.store.list(status));
      }
      if (path === '/api/tickets' && method === 'POST') {
        const body = await readJson(req);
        const key = header(req, 'idempotency-key');
        const { ticket, created } = await this.store.create(body, key);
        return send(res, created ? 201 : 200, ticket, { location: `/api/tickets/${ticket.id}` });
      }
      const one = /^\/api\/tickets\/(T-[0-9]{1,9})(\/close)?$/.exec(path);
      if (one && !one[2] && method === 'GET') {
        const ticket = this.store.get(one[1]!);
        if (!ticket) throw new TicketRefusal(404, `no ticket ${one[1]}`);
        return send(res, 200, ticket);
      }
      if (one?.[2] && method === 'POST') return send(res, 200, await this.store.close(one[1]!));
      return send(res, 404, { message: `no operation ${method} ${path}` });
    } catch (err) {
      if (err instanceof TicketRefusal) return send(res, err.status, { message: err.message });
      throw err;
    }
  }

  private async pages(
    req: IncomingMessage,
    res: ServerResponse,
    method: string,
    path: string,
  ): Promise<void> {
    const session = /(?:^|;\s*)session=([A-Za-z0-9_-]+)/.exec(req.headers.cookie ?? '')?.[1];
    const state: PageState = { signedIn: session !== undefined && this.sessions.has(session) };
    if (path === '/' && method === 'GET')
      return html(res, 200, boardPage(this.store.list(), state));
    if (path === '/login' && method === 'GET') return html(res, 200, loginPage(state));
    if (path === '/login' && method === 'POST') {
      const form = await readForm(req);
      if (
        form.get('username') !== 'demo' ||
        !sameSecret(form.get('password') ?? '', this.store.password)
      )
        return html(res, 401, loginPage({ ...state, error: 'Wrong user or password.' }));
      const id = randomBytes(18).toString('base64url');
      this.sessions.add(id);
      if (this.sessions.size > MAX_SESSIONS)
        this.sessions.delete(this.sessions.values().next().value!);
      return redirect(res, '/', `session=${id}; HttpOnly; SameSite=Strict; Path=/`);
    }
    if (path === '/tickets/new') {
      if (!state.signedIn) return redirect(res, '/login');
      if (method === 'GET') return html(res, 200, newTicketPage(state));
      if (method === 'POST') {
        const form = await readForm(req);
        try {
          const { ticket } = await this.store.create({
            title: form.get('title') ?? '',
            body: form.get('body') ?? undefined,
          });
          return redirect(res, `/tickets/${ticket.id}`);
        } catch (err) {
          if (!(err instanceof TicketRefusal)) throw err;
          return html(res, err.status, newTicketPage({ ...state, error: err.message }));
        }
      }
    }
    const one = /^\/tickets\/(T-[0-9]{1,9})$/.exec(path);
    const ticket = one && method === 'GET' ? this.store.get(one[1]!) : undefined;
    if (ticket) return html(res, 200, ticketPage(ticket, state));
    return html(res, 404, notFoundPage(state));
  }
}

/** Compares a presented secret with the expected one in constant time. */
function sameSecret(presented: string, expected: string): boolean {
  const a = Buffer.from(presented);
  const b = Buffer.from(expected);
  return a.length === b.length && timingSafeEqual(a, b);
}

function header(req: IncomingMessage, name: string): string | undefined {
  const value = req.headers[name];
  return Array.isArray(value) ? value[0] : value;
}

/** The request body as text, refused past {@link MAX_BODY_BYTES}. */
async function readText(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > MAX_BODY_BYTES)
      throw new TicketRefusal(413, `the body is past ${MAX_BODY_BYTES} bytes`);
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString('utf8');
}

async function readJson(req: IncomingMessage): Promise<{ title?: unknown; body?: unknown }> {
  const text = await readText(req);
  try {
    const value: unknown = JSON.parse(text);
    if (typeof value === 'object' && value !== null && !Array.isArray(value)) return value;
  } catch {
    // answered below
  }
  throw new TicketRefusal(422, 'the body must be a JSON object {title, body?}');
}

async function readForm(req: IncomingMessage): Promise<URLSearchParams> {
  return new URLSearchParams(await readText(req));
}

function send(
  res: ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
): void {
  res.writeHead(status, { 'content-type': 'application/json', ...headers });
  res.end(JSON.stringify(body));
}

function html(res: ServerResponse, status: number, body: string): void {
  res.writeHead(status, { 'content-type': 'text/html; charset=utf-8', ...SECURITY_HEADERS });
  res.end(body);
}

function redirect(res: ServerResponse, to: string, cookie?: string): void {
  res.writeHead(303, { location: to, ...(cookie ? { 'set-cookie': cookie } : {}) });
  res.end();
}
