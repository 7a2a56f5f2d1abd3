/** The ticket operations the demo imports as tools, by operationId. */
export const DEMO_TICKET_OPERATIONS = [
  'listTickets',
  'getTicket',
  'createTicket',
  'closeTicket',
] as const;

const ticket = {
  type: 'object',
  required: ['id', 'title', 'status', 'createdAt'],
  properties: {
    id: { type: 'string', examples: ['T-1'] },
    title: { type: 'string' },
    body: { type: 'string' },
    status: { type: 'string', enum: ['open', 'closed'] },
    createdAt: { type: 'string', format: 'date-time' },
    closedAt: { type: 'string', format: 'date-time' },
  },
};

const problem = {
  description: 'Refused; nothing changed.',
  content: {
    'application/json': {
      schema: { type: 'object', properties: { message: { type: 'string' } } },
    },
  },
};

const ticketId = {
  name: 'ticketId',
  in: 'path',
  required: true,
  description: 'The ticket, e.g. T-1.',
  schema: { type: 'string', pattern: '^T-[0-9]{1,9}$' },
};

/**
 * The OpenAPI 3.1 document of the demo ticket service's REST API (served at `/openapi.json`),
 * with the service's address as its server. The demo imports its operations as `http` tools.
 */
export function demoTicketsOpenApi(baseUrl: string): Record<string, unknown> {
  return {
    openapi: '3.1.0',
    info: {
      title: 'Demo ticket service',
      version: '1.0.0',
      description: "Gatehouse's demo: a small ticket tracker on loopback.",
    },
    servers: [{ url: baseUrl }],
    components: { securitySchemes: { bearer: { type: 'http', scheme: 'bearer' } } },
    security: [{ bearer: [] }],
    paths: {
      '/api/tickets': {
        get: {
          operationId: 'listTickets',
          summary: 'Lists tickets, newest first.',
          parameters: [
            {
              name: 'status',
              in: 'query',
              description: 'Only tickets in this state.',
              schema: { type: 'string', enum: ['open', 'closed'] },
            },
          ],
          responses: {
            '200': {
              description: 'The tickets.',
              content: { 'application/json': { schema: { type: 'array', items: ticket } } },
            },
          },
        },
        post: {
          operationId: 'createTicket',
          summary: 'Opens a ticket.',
          description:
            'Opens a ticket with a title and an optional body. An Idempotency-Key header makes a repeated request answer the ticket it opened the first time.',
          requestBody: {
            required: true,
            content: {
              'application/json': {
                schema: {
                  type: 'object',
                  required: ['title'],
                  additionalProperties: false,
                  properties: {
                    title: { type: 'string', minLength: 1, maxLength: 200 },
                    body: { type: 'string', maxLength: 5000 },
                  },
                },
              },
            },
          },
          responses: {
            '201': {
              description: 'The ticket opened.',
              content: { 'application/json': { schema: ticket } },
            },
            '422': problem,
          },
        },
      },
      '/api/tickets/{ticketId}': {
        get: {
          operationId: 'getTicket',
          summary: 'Reads one ticket.',
          parameters: [ticketId],
          responses: {
            '200': {
              description: 'The ticket.',
              content: { 'application/json': { schema: ticket } },
            },
            '404': problem,
          },
        },
      },
      '/api/tickets/{ticketId}/close': {
        post: {
          operationId: 'closeTicket',
          summary: 'Closes a ticket.',
          parameters: [ticketId],
          responses: {
            '200': {
              description: 'The ticket, closed.',
              content: { 'application/json': { schema: ticket } },
            },
            '404': problem,
            '409': problem,
          },
        },
      },
    },
  };
}
