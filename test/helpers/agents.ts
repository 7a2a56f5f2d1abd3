import { expect } from 'vitest';
import type { DemoGateway } from './gateway-fixture.js';

/**
 * Publishes an agent release of the demo tenant with `closure` (default: demo/echo only) and
 * `maxClass` (default production), with the other release fields in `more` (e.g. `mcp`), and adds
 * an agent principal of project `web` for it; returns the principal's id and bearer token.
 */
export async function addAgent(
  g: DemoGateway,
  agentId: string,
  closure = [{ id: 'demo/echo', version: '1.0.0' }],
  maxClass = 'production',
  more: Record<string, unknown> = {},
): Promise<{ id: string; token: string }> {
  const published = await g.inject<{ results: { result: string; message: string }[] }>(
    'POST',
    '/v1/events',
    {
      token: g.tokens.admin,
      body: {
        id: `test:agent/${agentId}@1.0.0`,
        type: 'AgentReleasePublished',
        data: { agentId, version: '1.0.0', closure, policy: { maxClass }, ...more },
      },
    },
  );
  expect(published.status, JSON.stringify(published.body)).toBe(200);
  for (const r of published.body.results) expect(r.result, r.message).toBe('applied');
  const principal = await g.gateway.directory.addPrincipal(
    {
      tenant: 'acme',
      name: agentId,
      roles: ['agent'],
      project: 'web',
      agent: { id: agentId, version: '1.0.0' },
    },
    'test',
  );
  return { id: principal.principal.id, token: principal.token };
}
