import type { StoredEvent } from '../../core/index.js';
import { intParam } from '../request-parsing.js';
import type { Route } from '../route.js';
import type { GatewayServices } from '../services.js';

const BATCH = 500;
const HEARTBEAT_MS = 15_000;

/** `GET /v1/events/stream`: the tenant's events as server-sent events, resumable. */
export function eventStreamRoutes(s: GatewayServices): Route[] {
  return [
    {
      method: 'GET',
      url: '/v1/events/stream',
      tag: 'events',
      summary:
        'Server-sent events of what Gatehouse emits for your tenant, in order. Resume with the Last-Event-ID header (or ?after=N); without either the stream starts at what happens next (?after=0 replays everything).',
      roles: ['agent', 'reviewer', 'operator', 'maintainer', 'admin'],
      query: { after: { type: 'integer', description: 'start after this event id' } },
      headers: {
        'Last-Event-ID': { description: 'the id of the last event received', required: false },
      },
      responses: {
        '200': 'text/event-stream; each event has id, event (its type) and data (JSON)',
      },
      handler: async (principal, req, reply) => {
        const tenant = principal.tenant;
        const header = req.headers['last-event-id'];
        const after = (req.query as { after?: string }).after;
        let last =
          typeof header === 'string' && header !== ''
            ? intParam(header, 'Last-Event-ID')
            : after !== undefined
              ? intParam(after, 'after')
              : await s.events.latest(tenant);
        reply.hijack();
        const res = reply.raw;
        res.writeHead(200, {
          'content-type': 'text/event-stream; charset=utf-8',
          'cache-control': 'no-cache',
          connection: 'keep-alive',
          'x-accel-buffering': 'no',
        });
        res.write(`retry: 2000\n: stream of tenant ${tenant} after event ${last}\n\n`);
        let closed = false;
        let pumping = false;
        let again = false;
        const pump = async (): Promise<void> => {
          if (pumping) {
            again = true;
            return;
          }
          pumping = true;
          try {
            do {
              again = false;
              let batch: StoredEvent[];
              do {
                batch = await s.events.after(tenant, last, BATCH);
                for (const e of batch) {
                  if (closed) return;
                  res.write(
                    `id: ${e.seq}\nevent: ${e.type}\ndata: ${JSON.stringify({ id: e.seq, type: e.type, subject: e.subject, at: e.at, data: e.data })}\n\n`,
                  );
                  last = e.seq;
                }
              } while (batch.length === BATCH && !closed);
            } while (again && !closed);
          } finally {
            pumping = false;
          }
        };
        const unsubscribe = s.events.subscribe(() => void pump().catch(() => res.destroy()));
        const heartbeat = setInterval(() => res.write(': keepalive\n\n'), HEARTBEAT_MS);
        res.on('close', () => {
          closed = true;
          unsubscribe();
          clearInterval(heartbeat);
        });
        await pump();
        return null;
      },
    },
  ];
}
