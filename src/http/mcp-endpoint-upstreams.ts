import { ProtocolError, ProtocolErrorCode } from '@modelcontextprotocol/server';
import type { Server } from '@modelcontextprotocol/server';
import { mcpExecution } from '../mcp/index.js';
import type { McpService } from '../mcp/index.js';
import type { Principal } from '../tenancy/index.js';
import { toProtocolError } from './mcp-endpoint-errors.js';
import type { ToolRef } from './mcp-endpoint-names.js';
import type { GatewayServices } from './services.js';

/** The `_meta` key naming the upstream server a resource or prompt comes from (and may name it). */
export const UPSTREAM_META = 'gatehouse/upstream';

/** An upstream server the agent's closure reaches, with the label its prompt names begin with. */
interface Reached {
  id: string;
  name: string;
  /** `[A-Za-z0-9-]` only, so `<label>__<prompt>` splits at the first `__`. */
  label: string;
}

/** Options of {@link registerPassThrough}. */
export interface PassThroughOptions {
  services: GatewayServices & { mcp: McpService };
  principal: Principal;
  closure: () => readonly ToolRef[];
}

/**
 * Resources and prompts of the upstream servers the agent's release closure reaches, passed
 * through read-only. The tenant rule: an agent sees a server's resources and prompts only while
 * its closure holds a callable tool of that server (active server, bound with the approved
 * digest), and only servers of its own tenant. Resource URIs are kept as the upstream gives them,
 * with the server in `_meta["gatehouse/upstream"]`; prompts are named `<server>__<prompt>`.
 * Requests go through the pooled connection with the upstream request timeout; nothing is recorded.
 */
export function registerPassThrough(server: Server, o: PassThroughOptions): void {
  const s = o.services;
  const p = o.principal;
  const mcp = s.mcp;
  /** Which server listed a URI last, so resources/read finds it without `_meta`. */
  const owners = new Map<string, string>();

  const reached = async (): Promise<Reached[]> => {
    const ids = new Set<string>();
    for (const ref of o.closure()) {
      const stored = s.registry.tool(p.tenant, ref.id, ref.version)?.stored;
      if (!stored || stored.state === 'revoked' || stored.descriptor.kind !== 'mcp') continue;
      const exec = mcpExecution(stored.descriptor);
      if (!exec || ids.has(exec.server)) continue;
      if (await mcp.isCallable(p.tenant, exec.server, exec.tool, stored.descriptor))
        ids.add(exec.server);
    }
    const servers = (await mcp.list(p.tenant)).filter((x) => ids.has(x.id) && x.state === 'active');
    const plain = servers.map((x) => x.name.replace(/[^A-Za-z0-9-]+/g, '-'));
    return servers.map((x, i) => {
      const label = plain[i]!;
      const unique = label !== '' && plain.indexOf(label) === plain.lastIndexOf(label);
      return {
        id: x.id,
        name: x.name,
        label: unique ? label : x.id.replace(/[^A-Za-z0-9-]+/g, '-'),
      };
    });
  };

  const tag = (r: Reached, meta: Record<string, unknown> | undefined) => ({
    ...meta,
    [UPSTREAM_META]: { server: r.id, name: r.name, untrusted: true },
  });

  /** Each reached server's answer to `op`; a server that fails is left out of the list. */
  const fromEach = async <T>(
    op: (r: Reached) => Promise<T[]>,
  ): Promise<{ r: Reached; items: T[] }[]> => {
    const servers = await reached();
    const settled = await Promise.allSettled(servers.map((r) => op(r)));
    return servers.flatMap((r, i) => {
      const x = settled[i]!;
      return x.status === 'fulfilled' ? [{ r, items: x.value }] : [];
    });
  };

  const listResources = async () => {
    const lists = await fromEach((r) =>
      mcp.readUpstream(p.tenant, r.id, (c, t) => c.listResources(t)),
    );
    return lists.flatMap(({ r, items }) =>
      items.map((x) => {
        owners.set(x.uri, r.id);
        return { ...x, _meta: tag(r, x._meta) };
      }),
    );
  };

  server.setRequestHandler('resources/list', async () => {
    try {
      return { resources: await listResources() };
    } catch (err) {
      throw toProtocolError(err);
    }
  });

  server.setRequestHandler('resources/templates/list', async () => {
    try {
      const lists = await fromEach((r) =>
        mcp.readUpstream(p.tenant, r.id, (c, t) => c.listResourceTemplates(t)),
      );
      return {
        resourceTemplates: lists.flatMap(({ r, items }) =>
          items.map((x) => ({ ...x, _meta: tag(r, x._meta) })),
        ),
      };
    } catch (err) {
      throw toProtocolError(err);
    }
  });

  server.setRequestHandler('resources/read', async (request) => {
    const { uri, _meta } = request.params;
    try {
      const servers = await reached();
      const named = _meta?.[UPSTREAM_META];
      let target: Reached | undefined;
      if (named !== undefined) {
        target = servers.find((r) => r.id === named || r.name === named || r.label === named);
        if (!target) throw invalid(`No upstream server ${JSON.stringify(named)} is reachable.`);
      } else {
        const owner = owners.get(uri);
        target = servers.find((r) => r.id === owner);
        if (!target && servers.length === 1) target = servers[0];
        if (!target) {
          await listResources();
          target = servers.find((r) => r.id === owners.get(uri));
        }
        if (!target)
          throw invalid(
            `No reachable upstream lists ${uri}; name the server in _meta "${UPSTREAM_META}".`,
          );
      }
      const result = await mcp.readUpstream(p.tenant, target.id, (c, t) => c.readResource(uri, t));
      return { ...result, _meta: tag(target, result._meta) };
    } catch (err) {
      throw toProtocolError(err);
    }
  });

  server.setRequestHandler('prompts/list', async () => {
    try {
      const lists = await fromEach((r) =>
        mcp.readUpstream(p.tenant, r.id, (c, t) => c.listPrompts(t)),
      );
      return {
        prompts: lists.flatMap(({ r, items }) =>
          items.map((x) => ({ ...x, name: `${r.label}__${x.name}`, _meta: tag(r, x._meta) })),
        ),
      };
    } catch (err) {
      throw toProtocolError(err);
    }
  });

  server.setRequestHandler('prompts/get', async (request) => {
    const { name, arguments: args } = request.params;
    try {
      const cut = name.indexOf('__');
      const label = cut > 0 ? name.slice(0, cut) : '';
      const target = (await reached()).find((r) => r.label === label);
      if (!target)
        throw invalid(`Unknown prompt: ${name} is not a prompt of this agent (see prompts/list).`);
      const result = await mcp.readUpstream(p.tenant, target.id, (c, t) =>
        c.getPrompt(name.slice(cut + 2), args, t),
      );
      return { ...result, _meta: tag(target, result._meta) };
    } catch (err) {
      throw toProtocolError(err);
    }
  });
}

function invalid(message: string): ProtocolError {
  return new ProtocolError(ProtocolErrorCode.InvalidParams, message);
}
