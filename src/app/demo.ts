import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { writeFileAtomic } from '../audit/index.js';
import { defaultTenantPolicy } from '../policy/index.js';
import { demoAgentEvent, demoToolEvents } from './demo-tools.js';
import { seedDemoMcp } from './demo-mcp.js';
import { seedDemoTicketTools } from './demo-ticket-tools.js';
import { seedDemoBrowserTools } from './demo-browser-tools.js';
import type { DemoTicketService } from './demo-ticket-service.js';
import type { Gateway } from './gateway.js';

/** The demo's principals' bearer tokens, as written to `DATA/demo-tokens.json` (DESIGN §9). */
export type DemoTokens = Record<'agent' | 'reviewer' | 'operator' | 'maintainer' | 'admin', string>;

/** A demo rule, so a policy denial can be tried: production-class calls may not come from dev. */
const demoPolicy = `
@id("no-production-changes-from-dev")
forbid (principal, action == Gatehouse::Action::"invoke", resource)
when { context.effectiveClass == "production" && context.environmentClass == "development" };
`;

const roles: (keyof DemoTokens)[] = ['agent', 'reviewer', 'operator', 'maintainer', 'admin'];

/** The demo's tokens live long (a year), but like every token they expire. */
const DEMO_TOKEN_TTL = '365d';

/**
 * Seeds the demo: tenant `acme`, project `web`, environments `dev`, `prod` and `freeze` (frozen),
 * the default tenant policy, the demo tools, the ticket service's tools, `demo-agent@1.0.0`, and
 * one principal per role. Safe to repeat: an existing data directory keeps its data and its tokens.
 */
export async function seedDemo(g: Gateway, tickets: DemoTicketService): Promise<DemoTokens> {
  const actor = 'demo-seed';
  await g.directory.ensureTenant('acme', 'Acme Corp', actor);
  await g.directory.ensureProject('acme', 'web', actor);
  for (const [name, cls, frozen] of [
    ['dev', 'development', false],
    ['prod', 'production', false],
    ['freeze', 'production', true],
  ] as const) {
    if (!g.directory.environment('acme', 'web', name)) {
      await g.directory.putEnvironment(
        { tenant: 'acme', project: 'web', name, class: cls, frozen },
        actor,
      );
    }
  }
  if (!(await g.policy.read('acme'))) {
    await g.policy.replace('acme', undefined, defaultTenantPolicy() + demoPolicy, actor);
  }
  if (!(await g.secrets.list('acme')).some((m) => m.name === 'demo-token')) {
    await g.secrets.put(
      'acme',
      'demo-token',
      `demo-${randomBytes(18).toString('base64url')}`,
      ['demo'],
      actor,
    );
  }
  await g.registry.applyEvents('acme', demoToolEvents, actor);
  const ticketTools = await seedDemoTicketTools(g, tickets, actor);
  const browserTools = await seedDemoBrowserTools(g, actor, tickets.url);
  const mcpTools = g.registry.agentRelease('acme', 'demo-agent', '1.0.0')
    ? []
    : await seedDemoMcp(g, actor);
  if (!g.registry.agentRelease('acme', 'demo-agent', '1.0.0')) {
    await g.registry.applyEvents(
      'acme',
      [demoAgentEvent([...ticketTools, ...browserTools, ...mcpTools])],
      actor,
    );
  }
  const file = join(g.config.dataDir, 'demo-tokens.json');
  if (existsSync(file)) return JSON.parse(await readFile(file, 'utf8')) as DemoTokens;
  const tokens = {} as DemoTokens;
  for (const role of roles) {
    const { token } = await g.directory.addPrincipal(
      {
        tenant: 'acme',
        name: `demo-${role}`,
        roles: [role],
        ...(role === 'agent'
          ? { project: 'web', agent: { id: 'demo-agent', version: '1.0.0' } }
          : {}),
      },
      actor,
      { ttl: DEMO_TOKEN_TTL, label: 'demo' },
    );
    tokens[role] = token;
  }
  await writeFileAtomic(file, `${JSON.stringify(tokens, null, 2)}\n`, 0o600);
  return tokens;
}
