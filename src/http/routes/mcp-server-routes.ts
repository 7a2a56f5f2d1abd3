import { ErrorCode, GatehouseError, isSideEffectClass } from '../../core/index.js';
import type { McpService, McpTransport } from '../../mcp/index.js';
import type { ToolDescriptor } from '../../tools/index.js';
import {
  MAX_REASON_FIELD,
  objectBody,
  objectMember,
  optionalString,
  optionalText,
  stringField,
} from '../request-parsing.js';
import type { Route } from '../route.js';

/** What the MCP server routes need. */
interface McpServerRouteServices {
  mcp: McpService;
  /** Publishes release events (the tool registry's `applyEvents`). */
  publish: (tenant: string, events: unknown[], actor: string) => Promise<unknown>;
  /** Checks release events as `publish` would take them, changing nothing (`checkEvents`). */
  checkPublish: (tenant: string, events: unknown[], actor: string) => Promise<void>;
}

const params = (req: { params: unknown }) => req.params as { id: string; tool?: string };

/** The `AssetReleasePublished` event that publishes a bound tool's descriptor. */
function publication(d: ToolDescriptor, serverId: string): Record<string, unknown> {
  return {
    id: `mcp-bind:${serverId}:${d.id}@${d.version}`,
    type: 'AssetReleasePublished',
    data: { assetId: d.id, version: d.version, descriptor: d },
  };
}

function transportOf(body: Record<string, unknown>): McpTransport {
  const t = body.transport;
  if (typeof t !== 'object' || t === null || Array.isArray(t))
    throw new GatehouseError(ErrorCode.INVALID_INPUT, '/transport must be an object.', {
      details: { pointer: '/transport' },
    });
  return t as McpTransport;
}

/** Upstream MCP servers: register, list, read, verify, activate, retire, bind, re-approve. */
export function mcpServerRoutes(s: McpServerRouteServices): Route[] {
  return [
    {
      method: 'GET',
      url: '/v1/mcp-servers',
      tag: 'mcp',
      summary: "Your tenant's upstream MCP servers",
      responses: { '200': '{servers: [...]}' },
      handler: async (principal) => ({
        status: 200,
        body: { servers: await s.mcp.list(principal.tenant) },
      }),
    },
    {
      method: 'POST',
      url: '/v1/mcp-servers',
      tag: 'mcp',
      summary: 'Register an upstream MCP server (stdio command or Streamable HTTP URL)',
      body: {
        type: 'object',
        required: ['name', 'transport'],
        properties: { name: { type: 'string' }, transport: { type: 'object' } },
      },
      responses: {
        '201': 'the server',
        '409': 'same identity already registered',
        '422': 'invalid',
      },
      handler: async (principal, req) => {
        const body = objectBody(req.body, 'POST /v1/mcp-servers');
        const server = await s.mcp.register(principal.tenant, principal.id, {
          name: stringField(body, 'name'),
          transport: transportOf(body),
        });
        return { status: 201, body: server };
      },
    },
    {
      method: 'GET',
      url: '/v1/mcp-servers/:id',
      tag: 'mcp',
      summary: 'One server: state, discovered tools (with digests), resources, prompts, bindings',
      responses: { '200': '{server, discovery, bindings}', '404': 'no such server' },
      handler: async (principal, req) => ({
        status: 200,
        body: await s.mcp.get(principal.tenant, params(req).id),
      }),
    },
    ...(['verify', 'activate', 'retire'] as const).map((action): Route => ({
      method: 'POST',
      url: `/v1/mcp-servers/:id/${action}`,
      tag: 'mcp',
      summary: {
        verify: 'Handshake and discovery (again, for a verified or active server)',
        activate: 'Make a verified server active (a publication-class action)',
        retire: 'Retire the server: final; its process is stopped',
      }[action],
      responses: { '200': 'the server', '404': 'no such server', '409': 'not in a state for it' },
      handler: async (principal, req) => {
        const { id } = params(req);
        const t = principal.tenant;
        switch (action) {
          case 'verify':
            return { status: 200, body: await s.mcp.verify(t, id, principal.id) };
          case 'activate':
            return { status: 200, body: await s.mcp.activate(t, id, principal.id) };
          case 'retire': {
            const body =
              req.body === undefined || req.body === null
                ? {}
                : objectBody(req.body, 'POST /v1/mcp-servers/:id/retire');
            const reason = optionalText(body, 'reason', MAX_REASON_FIELD) || 'retired';
            return { status: 200, body: await s.mcp.retire(t, id, principal.id, reason) };
          }
        }
      },
    })),
    {
      method: 'POST',
      url: '/v1/mcp-servers/:id/bindings',
      tag: 'mcp',
      summary: 'Bind a discovered tool to a descriptor with a declared class, and publish it',
      body: {
        type: 'object',
        required: ['tool', 'class', 'descriptor'],
        properties: {
          tool: { type: 'string' },
          class: { type: 'string' },
          descriptor: {
            type: 'object',
            required: ['id', 'version'],
            properties: { id: { type: 'string' }, version: { type: 'string' } },
          },
        },
      },
      responses: {
        '201': '{binding, descriptor, warnings, published}',
        '404': 'no such server, or it does not list the tool',
        '409': 'the tool is bound already, or the version is published with other content',
        '422': 'the descriptor would be refused (id or version malformed); nothing is bound',
      },
      handler: async (principal, req) => {
        const { id } = params(req);
        const body = objectBody(req.body, `POST /v1/mcp-servers/${id}/bindings`);
        const cls = body.class;
        if (!isSideEffectClass(cls))
          throw new GatehouseError(
            ErrorCode.INVALID_INPUT,
            '/class must be read, workspace-write, shared-write or production.',
            { details: { pointer: '/class' } },
          );
        const d = objectMember(body, 'descriptor', '{"id": …, "version": …}');
        // A descriptor the registry would refuse (a malformed id or version, a version published
        // with other content) is refused before the binding is stored.
        const r = await s.mcp.bind(
          principal.tenant,
          id,
          principal.id,
          {
            tool: stringField(body, 'tool'),
            class: cls,
            descriptor: {
              id: stringField(d, 'id', '/descriptor/id'),
              version: stringField(d, 'version', '/descriptor/version'),
            },
          },
          (descriptor) =>
            s.checkPublish(principal.tenant, [publication(descriptor, id)], principal.id),
        );
        const published = await s.publish(
          principal.tenant,
          [publication(r.descriptor, id)],
          principal.id,
        );
        return { status: 201, body: { ...r, published } };
      },
    },
    {
      method: 'POST',
      url: '/v1/mcp-servers/:id/bindings/:tool/reapprove',
      tag: 'mcp',
      summary:
        'Accept a changed tool as the upstream lists it now; a changed input schema needs a new version',
      body: { type: 'object', properties: { version: { type: 'string' } } },
      responses: {
        '200': '{binding, inputSchemaChanged, descriptor, published}',
        '409': 'not awaiting re-approval',
        '422': 'input schema changed and no new version given',
      },
      handler: async (principal, req) => {
        const { id, tool } = params(req);
        const body =
          req.body === undefined || req.body === null
            ? {}
            : objectBody(req.body, 'POST /v1/mcp-servers/:id/bindings/:tool/reapprove');
        const version = optionalString(body, 'version');
        const r = await s.mcp.reapprove(
          principal.tenant,
          id,
          tool ?? '',
          principal.id,
          version ? { version } : {},
          (descriptor) =>
            s.checkPublish(principal.tenant, [publication(descriptor, id)], principal.id),
        );
        const published = r.descriptor
          ? await s.publish(principal.tenant, [publication(r.descriptor, id)], principal.id)
          : null;
        return { status: 200, body: { ...r, published } };
      },
    },
  ];
}
