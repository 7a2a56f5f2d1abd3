import { ErrorCode, GatehouseError } from '../../core/index.js';
import type { Route } from '../route.js';
import type { GatewayServices } from '../services.js';

/** Release events in, descriptors out. */
export function registryRoutes(s: GatewayServices): Route[] {
  return [
    {
      method: 'POST',
      url: '/v1/events',
      tag: 'registry',
      summary:
        'Apply release events (one event or an array), once per event id, in order per asset',
      body: { oneOf: [{ type: 'object' }, { type: 'array', items: { type: 'object' } }] },
      responses: {
        '200': '{results: [{id, type, result, message}]}',
        '409': 'conflict',
        '422': 'invalid event',
      },
      handler: async (principal, req) => {
        const body = req.body;
        if (typeof body !== 'object' || body === null) {
          throw new GatehouseError(
            ErrorCode.INVALID_EVENT,
            'The body must be one release event or an array of them (JSON).',
          );
        }
        const events = Array.isArray(body) ? (body as unknown[]) : [body];
        if (events.length === 0)
          throw new GatehouseError(ErrorCode.INVALID_EVENT, 'The array of events is empty.');
        const results = await s.registry.applyEvents(principal.tenant, events, principal.id);
        return { status: 200, body: { results } };
      },
    },
    {
      method: 'GET',
      url: '/v1/tools',
      tag: 'registry',
      summary: "Descriptors and their states (agents see their release closure's)",
      responses: { '200': '{tools: [{id, version, kind, class, state, digest, descriptor}]}' },
      handler: (principal, _req, _reply, grant) => {
        let all = s.registry.list(principal.tenant);
        // An agent owns the tools of its release closure.
        if (grant.owner !== null) {
          const release = principal.agent
            ? s.registry.agentRelease(principal.tenant, principal.agent.id, principal.agent.version)
            : undefined;
          const pinned = new Set(
            (release?.release.closure ?? []).map((t) => `${t.id}@${t.version}`),
          );
          all = all.filter((d) => pinned.has(`${d.descriptor.id}@${d.descriptor.version}`));
        }
        const tools = all.map((d) => ({
          id: d.descriptor.id,
          version: d.descriptor.version,
          kind: d.descriptor.kind,
          class: d.descriptor.sideEffect.class,
          state: d.state,
          stateReason: d.stateReason,
          digest: d.digest,
          publishedAt: d.publishedAt,
          descriptor: d.descriptor,
        }));
        return { status: 200, body: { tools } };
      },
    },
    {
      method: 'GET',
      url: '/v1/agent-releases',
      tag: 'registry',
      summary: "Agent releases: each version's closure and maxClass (agents see their own)",
      query: { agent: { type: 'string', description: 'only the versions of this agent id' } },
      responses: {
        '200': '{releases: [{agentId, version, closure, policy, mcp?, digest, publishedAt}]}',
      },
      handler: (principal, req, _reply, grant) => {
        const only = (req.query as { agent?: string }).agent;
        // An agent owns its own release.
        const agentOnly = grant.owner !== null;
        const releases = s.registry
          .agentReleases(principal.tenant)
          .filter((r) => only === undefined || r.release.agentId === only)
          .filter(
            (r) =>
              !agentOnly ||
              (r.release.agentId === principal.agent?.id &&
                r.release.version === principal.agent.version),
          )
          .map((r) => ({ ...r.release, digest: r.digest, publishedAt: r.publishedAt }));
        return { status: 200, body: { releases } };
      },
    },
  ];
}
