import { ErrorCode, GatehouseError } from '../../core/index.js';
import type { Directory } from '../../tenancy/index.js';
import type { EventStreamHub } from '../event-stream-hub.js';
import { intParam } from '../request-parsing.js';
import type { Route } from '../route.js';

/**
 * `GET /v1/events/stream`: the tenant's events as server-sent events, resumable. An agent's stream
 * carries only the events of its own calls (the event's owner); every stream ends as soon as the
 * token it was opened with stops working (revoked, rotated out, expired).
 */
export function eventStreamRoutes(hub: EventStreamHub, directory: Directory): Route[] {
  return [
    {
      method: 'GET',
      url: '/v1/events/stream',
      tag: 'events',
      summary:
        'Server-sent events of what Gatehouse emits for your tenant, in order (agents: of their own calls only). Resume with the Last-Event-ID header (or ?after=N); without either the stream starts at what happens next (?after=0 replays everything). A client that falls too far behind is closed and resumes with Last-Event-ID; streams are capped per principal, per tenant and per gateway. The stream ends when the token it was opened with is revoked or expires.',
      query: { after: { type: 'integer', description: 'start after this event id' } },
      headers: {
        'Last-Event-ID': { description: 'the id of the last event received', required: false },
      },
      responses: {
        '200': 'text/event-stream; each event has id, event (its type) and data (JSON)',
        '429': 'your principal or tenant has as many streams open as it may',
        '503': 'the gateway has as many streams open as it serves',
      },
      handler: async (principal, req, reply, grant) => {
        // HEAD (which Fastify derives from GET) says what GET would answer, without a stream
        // that would never end.
        if (req.method === 'HEAD')
          return { status: 200, body: '', contentType: 'text/event-stream; charset=utf-8' };
        const header = req.headers['last-event-id'];
        const after = (req.query as { after?: unknown }).after;
        const fromHeader = typeof header === 'string' && header !== '';
        const start = fromHeader
          ? intParam(header, 'Last-Event-ID', undefined, 'header')
          : after !== undefined
            ? intParam(after, 'after')
            : undefined;
        // An id past the newest event was never sent: resuming after it would skip, unseen,
        // every event until the log reached it.
        if (start !== undefined) {
          const head = await hub.head();
          if (start > head)
            throw new GatehouseError(
              ErrorCode.INVALID_INPUT,
              `${fromHeader ? 'Header Last-Event-ID' : 'Query parameter after'} is ${start}, past the newest event (${head}); resume with the id of an event you received, or leave it out to start at what happens next.`,
              { details: fromHeader ? { header: 'Last-Event-ID' } : { parameter: 'after' } },
            );
        }
        const token = grant.token;
        await hub.serve(principal, reply, start, {
          owner: grant.owner,
          ...(token
            ? {
                watch: (stop) =>
                  directory.tokens.watch(token.id, stop, Date.parse(token.expiresAt)),
              }
            : {}),
        });
        return null;
      },
    },
  ];
}
