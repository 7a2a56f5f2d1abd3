import { dereferenceOpenApi, importEvents, importOpenApi } from '../executors/index.js';
import type { DemoTicketService } from './demo-ticket-service.js';
import { DEMO_TICKET_OPERATIONS, demoTicketsOpenApi } from './demo-tickets-openapi.js';
import type { Gateway } from './gateway.js';

const TENANT = 'acme';
const VERSION = '1.0.0';
/** The secrets the ticket tools and browser tools use, in the scope their descriptors name. */
const SCOPE = 'tickets';

/** The tools the demo imports from the ticket service's OpenAPI document (`tickets/list-tickets`, …). */
export const DEMO_TICKET_TOOLS = [
  'tickets/list-tickets',
  'tickets/get-ticket',
  'tickets/create-ticket',
  'tickets/close-ticket',
].map((id) => ({ id, version: VERSION }));

/**
 * Seeds the ticket service's tools: its API key and page password as the secrets
 * `tickets-api-key` and `tickets-password`, and its operations imported from its own OpenAPI
 * document as `http` tools that send the key as a bearer token. Safe to repeat: what exists stays.
 * @returns the tools, for the demo agent's closure
 */
export async function seedDemoTicketTools(
  g: Gateway,
  tickets: DemoTicketService,
  actor: string,
): Promise<{ id: string; version: string }[]> {
  const have = new Set((await g.secrets.list(TENANT)).map((m) => m.name));
  for (const [name, value] of [
    ['tickets-api-key', tickets.store.apiKey],
    ['tickets-password', tickets.store.password],
  ] as const) {
    if (!have.has(name)) await g.secrets.put(TENANT, name, value, [SCOPE], actor);
  }
  if (g.registry.tool(TENANT, DEMO_TICKET_TOOLS[0]!.id, VERSION)) return DEMO_TICKET_TOOLS;
  const select = [...DEMO_TICKET_OPERATIONS];
  const document = await dereferenceOpenApi(demoTicketsOpenApi(tickets.url), select);
  const { descriptors } = importOpenApi(document, {
    idPrefix: 'tickets',
    version: VERSION,
    select,
  });
  const withKey = descriptors.map((d) => ({
    ...d,
    credentials: [
      {
        ref: 'tickets-api-key',
        scope: SCOPE,
        inject: { header: 'Authorization', format: 'Bearer {value}' },
      },
    ],
  }));
  await g.registry.applyEvents(TENANT, importEvents(withKey), actor);
  return DEMO_TICKET_TOOLS;
}
