import { ErrorCode, GatehouseError } from '../../core/index.js';
import { ROLES } from '../../tenancy/index.js';
import { knownVersionsText } from '../../tools/index.js';
import type { Role } from '../../tenancy/index.js';
import { objectBody, optionalString, stringField } from '../request-parsing.js';
import type { Route } from '../route.js';
import type { GatewayServices } from '../services.js';
import { TOKEN_EXPIRY_PROPERTIES, tokenExpiryFields } from './token-fields.js';

/** Platform admins list and create principals of their tenant; the first token is shown once. */
export function principalRoutes(s: GatewayServices): Route[] {
  return [
    {
      method: 'GET',
      url: '/v1/principals',
      tag: 'tenancy',
      summary: "Your tenant's principals: id, name, roles, project and agent release",
      responses: { '200': '{principals: [{id, name, roles, project, agent, createdAt}]}' },
      handler: (principal) => ({
        status: 200,
        body: { principals: s.directory.principalsOf(principal.tenant) },
      }),
    },
    {
      method: 'POST',
      url: '/v1/principals',
      tag: 'tenancy',
      summary:
        'Create a principal of your tenant with its first bearer token (the secret is shown once); the token expires after ttl, at expiresAt, or after the default lifetime',
      body: {
        type: 'object',
        required: ['name', 'roles'],
        properties: {
          name: { type: 'string' },
          roles: {
            type: 'array',
            items: { enum: [...ROLES] },
            description: 'agent alone, or any of the others',
          },
          ...TOKEN_EXPIRY_PROPERTIES,
          project: { type: 'string', description: 'for agents' },
          agent: {
            type: 'string',
            description: 'for agents: agentId@version of a published agent release',
          },
        },
      },
      responses: {
        '201': '{principal, token (the secret), tokenInfo}',
        '400': 'invalid body',
        '404': 'unknown project or agent release',
      },
      handler: async (principal, req) => {
        const body = objectBody(req.body, 'POST /v1/principals');
        const name = stringField(body, 'name');
        const roles = body.roles;
        if (
          !Array.isArray(roles) ||
          roles.length === 0 ||
          !roles.every((r) => (ROLES as readonly unknown[]).includes(r))
        ) {
          throw new GatehouseError(
            ErrorCode.INVALID_INPUT,
            `/roles must be a non-empty list of ${ROLES.join(', ')}.`,
            { details: { pointer: '/roles' } },
          );
        }
        const twice = roles.findIndex((r, i) => roles.indexOf(r) !== i);
        if (twice >= 0)
          throw new GatehouseError(
            ErrorCode.INVALID_INPUT,
            `/roles names ${String(roles[twice])} more than once; name each role once.`,
            { details: { pointer: `/roles/${twice}` } },
          );
        const project = optionalString(body, 'project');
        const agentRef = optionalString(body, 'agent');
        const isAgent = roles.includes('agent');
        if (isAgent !== (project !== undefined && agentRef !== undefined)) {
          throw new GatehouseError(
            ErrorCode.INVALID_INPUT,
            'An agent principal needs /project and /agent (agentId@version); other principals take neither.',
          );
        }
        let agent: { id: string; version: string } | undefined;
        if (project !== undefined && agentRef !== undefined) {
          if (!s.directory.hasProject(principal.tenant, project)) {
            throw new GatehouseError(
              ErrorCode.NOT_FOUND,
              `Project ${JSON.stringify(project)} does not exist.`,
              { details: { pointer: '/project' } },
            );
          }
          const at = agentRef.lastIndexOf('@');
          agent = { id: agentRef.slice(0, at), version: agentRef.slice(at + 1) };
          if (at <= 0 || !s.registry.agentRelease(principal.tenant, agent.id, agent.version)) {
            const versions = s.registry
              .agentReleases(principal.tenant)
              .filter((r) => r.release.agentId === agent!.id)
              .map((r) => ({ version: r.release.version }));
            throw new GatehouseError(
              ErrorCode.NOT_FOUND,
              `Agent release ${JSON.stringify(agentRef)} is not published (${knownVersionsText(agent.id, versions)}); publish it with an AgentReleasePublished event first (gatehouse releases publish).`,
              { details: { pointer: '/agent', versions: versions.map((v) => v.version) } },
            );
          }
        }
        const created = await s.directory.addPrincipal(
          {
            tenant: principal.tenant,
            name,
            roles: roles as Role[],
            ...(project !== undefined ? { project } : {}),
            ...(agent ? { agent } : {}),
          },
          principal.id,
          tokenExpiryFields(body),
        );
        return { status: 201, body: created };
      },
    },
  ];
}
