import { ErrorCode, GatehouseError } from '../../core/index.js';
import type { Route } from '../route.js';
import type { GatewayServices } from '../services.js';

/** Read and replace Cedar policy text per tenant and per project. */
export function policyRoutes(s: GatewayServices): Route[] {
  const read = async (tenant: string, project?: string) => {
    const p = await s.policy.read(tenant, project);
    if (!p)
      throw new GatehouseError(
        ErrorCode.NOT_FOUND,
        `No ${project ? `policy for project ${project}` : 'tenant policy'} is stored.`,
      );
    return { status: 200, body: p };
  };
  const replace = async (
    tenant: string,
    project: string | undefined,
    body: unknown,
    actor: string,
  ) => {
    const text = typeof body === 'string' ? body : (body as { text?: unknown } | null)?.text;
    if (typeof text !== 'string') {
      throw new GatehouseError(
        ErrorCode.INVALID_POLICY,
        'Send the Cedar policy text as {"text": "..."} (application/json) or as text/plain.',
      );
    }
    if (project !== undefined && !s.directory.hasProject(tenant, project)) {
      throw new GatehouseError(
        ErrorCode.NOT_FOUND,
        `Project ${JSON.stringify(project)} does not exist.`,
      );
    }
    return { status: 200, body: await s.policy.replace(tenant, project, text, actor) };
  };
  const body = {
    type: 'object',
    required: ['text'],
    properties: { text: { type: 'string', description: 'Cedar policy text' } },
  };
  return [
    {
      method: 'GET',
      url: '/v1/policies/tenant',
      tag: 'policy',
      summary: "Your tenant's Cedar policy",
      responses: { '200': '{text, version, updatedAt}' },
      handler: (principal) => read(principal.tenant),
    },
    {
      method: 'PUT',
      url: '/v1/policies/tenant',
      tag: 'policy',
      summary: "Replace your tenant's Cedar policy (validated against the Cedar schema first)",
      body,
      responses: { '200': '{version, policyIds}', '422': 'the policy does not parse or validate' },
      handler: (principal, req) => replace(principal.tenant, undefined, req.body, principal.id),
    },
    {
      method: 'GET',
      url: '/v1/policies/projects/:project',
      tag: 'policy',
      summary: "A project's Cedar policy",
      responses: { '200': '{text, version, updatedAt}' },
      handler: (principal, req) =>
        read(principal.tenant, (req.params as { project: string }).project),
    },
    {
      method: 'PUT',
      url: '/v1/policies/projects/:project',
      tag: 'policy',
      summary: "Replace a project's Cedar policy",
      body,
      responses: { '200': '{version, policyIds}', '422': 'the policy does not parse or validate' },
      handler: (principal, req) =>
        replace(
          principal.tenant,
          (req.params as { project: string }).project,
          req.body,
          principal.id,
        ),
    },
  ];
}
