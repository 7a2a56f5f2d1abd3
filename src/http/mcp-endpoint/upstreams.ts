import type { Server } from '@modelcontextprotocol/server';
import { ReadRefusal, ReadType, RecordedReads, mcpExecution } from '../../mcp/index.js';
import type { ReadRequest } from '../../mcp/index.js';
import type { McpServerRecord, McpService, UpstreamConnection } from '../../mcp/index.js';
import type { Principal } from '../../tenancy/index.js';
import { toProtocolError } from './errors.js';
import type { ToolRef } from './names.js';
import { PromptNames } from './prompt-names.js';
import { sessionDigest } from './refusals.js';
import type { GatewayServices } from '../services.js';
import { UPSTREAM_META } from './live-sessions.js';
import type { LiveSession, LiveSessions } from './live-sessions.js';

/** An upstream server the agent's closure reaches, with the label its prompt names begin with. */
interface Reached {
  id: string;
  name: string;
  /** `[A-Za-z0-9-]` only, so `<label>__<prompt>` splits at the first `__`. */
  label: string;
}

/** The servers the agent's closure reaches, and every server of its tenant. */
interface Reach {
  servers: Reached[];
  all: McpServerRecord[];
}

/** Options of {@link registerPassThrough}. */
interface PassThroughOptions {
  services: GatewayServices & { mcp: McpService };
  principal: Principal;
  closure: () => readonly ToolRef[];
  /** The release keeps upstream names (`mcp.toolNames: "upstream"`): prompts keep theirs too. */
  keepNames: boolean;
  /** The session, for its subscriptions and log level. */
  live: LiveSession;
  /** This node's open sessions. */
  sessions: LiveSessions;
}

/**
 * Resources and prompts of the upstream servers the agent's release closure reaches, passed
 * through read-only. The tenant rule: an agent sees a server's resources and prompts only while
 * its closure holds a callable tool of that server (active server, bound with the approved
 * digest), and only servers of its own tenant. Resource URIs are kept as the upstream gives them,
 * with the server in `_meta["gatehouse/upstream"]`; prompts are named `<server>__<prompt>`, or
 * keep their own names for a release that keeps upstream names (see {@link PromptNames}).
 * Requests go through the pooled connection with the upstream request timeout.
 *
 * Each `resources/read` and `prompts/get` is recorded in the tenant's audit log, whether the
 * upstream answered, failed, or Gatehouse refused because the agent named a server or resource
 * its closure does not reach; answers are redacted like tool output and served only once recorded
 * (see {@link RecordedReads}). The list
 * operations (`resources/list`, `resources/templates/list`, `prompts/list`) are not recorded:
 * they return names and descriptions of what the closure already grants, no content, and clients
 * repeat them often.
 */
export function registerPassThrough(
  server: Server,
  options: PassThroughOptions,
): (serverId: string) => Promise<boolean> {
  const s = options.services;
  const p = options.principal;
  const mcp = s.mcp;
  /** Which server listed a URI last, so resources/read finds it without `_meta`. */
  const owners = new Map<string, string>();
  const reads = new RecordedReads({ mcp, writer: s.auditWriter, principal: p });
  const promptNames = new PromptNames(options.keepNames);

  /**
   * The servers the closure reaches now, and all the tenant's servers, from one view of the stored
   * state. Computed once per request (a request that needs it twice passes it on), never kept
   * between requests: a server that turns degraded or a tool that is unbound drops out at once.
   */
  const reached = async (): Promise<Reach> => {
    const view = mcp.view(p.tenant);
    const ids = new Set<string>();
    for (const ref of options.closure()) {
      const stored = s.registry.tool(p.tenant, ref.id, ref.version)?.stored;
      if (!stored || stored.state === 'revoked' || stored.descriptor.kind !== 'mcp') continue;
      const exec = mcpExecution(stored.descriptor);
      if (!exec || ids.has(exec.server)) continue;
      if (await view.isBound(exec.server, exec.tool, stored.descriptor)) ids.add(exec.server);
    }
    const all = await view.servers();
    const servers = all.filter((x) => ids.has(x.id) && x.state === 'active');
    const labels = servers.map((x) => plain(x.name));
    return {
      all,
      servers: servers.map((x, i) => {
        const label = labels[i]!;
        const unique = label !== '' && labels.indexOf(label) === labels.lastIndexOf(label);
        return { id: x.id, name: x.name, label: unique ? label : plain(x.id) };
      }),
    };
  };

  /** The tenant's server an agent named (by id, name or prompt label), reachable or not. */
  const serverNamed = (reach: Reach, named: unknown): string | null => {
    if (typeof named !== 'string' || named === '') return null;
    const found = reach.all.find(
      (x) => x.id === named || x.name === named || plain(x.name) === named || plain(x.id) === named,
    );
    return found?.id ?? null;
  };

  const tag = (r: Reached, meta: Record<string, unknown> | undefined) => ({
    ...meta,
    [UPSTREAM_META]: { server: r.id, name: r.name, untrusted: true },
  });

  /** Each reached server's answer to `op`; a server that fails is left out of the list. */
  const fromEach = async <T>(
    servers: Reached[],
    op: (r: Reached) => Promise<T[]>,
  ): Promise<{ r: Reached; items: T[] }[]> => {
    const settled = await Promise.allSettled(servers.map((r) => op(r)));
    return servers.flatMap((r, i) => {
      const x = settled[i]!;
      return x.status === 'fulfilled' ? [{ r, items: x.value }] : [];
    });
  };

  /** Which server listed a resource template last, for `completion/complete`. */
  const templateOwners = new Map<string, string>();
  const listTemplates = async (servers: Reached[]) => {
    const lists = await fromEach(servers, (r) =>
      mcp.readUpstream(p.tenant, r.id, (c, t) => c.listResourceTemplates(t)),
    );
    return lists.flatMap(({ r, items }) =>
      items.map((x) => {
        templateOwners.set(x.uriTemplate, r.id);
        return { ...x, _meta: tag(r, x._meta) };
      }),
    );
  };

  const listResources = async (servers: Reached[]) => {
    const lists = await fromEach(servers, (r) =>
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
      return { resources: await listResources((await reached()).servers) };
    } catch (err) {
      throw toProtocolError(err);
    }
  });

  server.setRequestHandler('resources/templates/list', async () => {
    try {
      return { resourceTemplates: await listTemplates((await reached()).servers) };
    } catch (err) {
      throw toProtocolError(err);
    }
  });

  /**
   * The reachable server a resource request goes to: the one named in `_meta`, else the one that
   * listed the URI. @throws GatehouseError (recorded) when none is reachable.
   */
  const resourceTarget = async (
    asked: ReadRequest & { uri: string },
    meta: Record<string, unknown> | undefined,
  ): Promise<Reached> => {
    const { uri } = asked;
    const reach = await reached();
    const servers = reach.servers;
    const named = meta?.[UPSTREAM_META];
    let target: Reached | undefined;
    if (named !== undefined) {
      target = servers.find((x) => x.id === named || x.name === named || x.label === named);
      if (!target)
        throw await reads.refuse(
          asked,
          serverNamed(reach, named),
          ReadRefusal.serverNotReachable,
          `No upstream server ${JSON.stringify(named)} is reachable.`,
        );
      return target;
    }
    const owner = owners.get(uri);
    target = servers.find((x) => x.id === owner);
    if (!target && servers.length === 1) target = servers[0];
    if (!target) {
      await listResources(servers);
      target = servers.find((x) => x.id === owners.get(uri));
    }
    if (!target)
      throw await reads.refuse(
        asked,
        null,
        ReadRefusal.resourceNotListed,
        `No reachable upstream lists ${uri}; name the server in _meta "${UPSTREAM_META}".`,
      );
    return target;
  };

  server.setRequestHandler('resources/read', async (request, ctx) => {
    const { uri, _meta } = request.params;
    const asked = { type: ReadType.resource, sessionSha256: digestOf(ctx.sessionId), uri } as const;
    try {
      const target = await resourceTarget(asked, _meta);
      const result = await reads.through(asked, target.id, (c, t) => c.readResource(uri, t));
      return { ...result, _meta: tag(target, result._meta) };
    } catch (err) {
      throw toProtocolError(err);
    }
  });

  // Subscriptions go to the server that owns the resource, refused like a read of it (and the
  // refusal recorded); its updates reach only sessions that subscribed and still reach it.
  for (const method of ['resources/subscribe', 'resources/unsubscribe'] as const) {
    server.setRequestHandler(method, async (request, ctx) => {
      const { uri, _meta } = request.params;
      const asked = {
        type: ReadType.resource,
        sessionSha256: digestOf(ctx.sessionId),
        uri,
      } as const;
      try {
        const target = await resourceTarget(asked, _meta);
        if (method === 'resources/subscribe')
          await options.sessions.subscribe(options.live, target.id, uri);
        else await options.sessions.unsubscribe(options.live, target.id, uri);
        return {};
      } catch (err) {
        throw toProtocolError(err);
      }
    });
  }

  // The session's level filters what it is sent; each reached server is asked for the most
  // detailed level any session of the tenant on this node set (a server that fails is skipped).
  server.setRequestHandler('logging/setLevel', async (request) => {
    try {
      options.live.level = request.params.level;
      const level = options.sessions.levelOf(p.tenant) ?? request.params.level;
      const servers = (await reached()).servers;
      await Promise.allSettled(
        servers.map((r) => mcp.readUpstream(p.tenant, r.id, (c, t) => c.setLoggingLevel(level, t))),
      );
      return {};
    } catch (err) {
      throw toProtocolError(err);
    }
  });

  /** The reached servers' prompts under the names the agent sees. */
  const listPrompts = async (servers: Reached[]) => {
    const lists = await fromEach(servers, (r) =>
      mcp.readUpstream(p.tenant, r.id, (c, t) => c.listPrompts(t)),
    );
    return promptNames
      .name(lists)
      .map(({ r, item, name }) => ({ ...item, name, _meta: tag(r, item._meta) }));
  };

  server.setRequestHandler('prompts/list', async () => {
    try {
      return { prompts: await listPrompts((await reached()).servers) };
    } catch (err) {
      throw toProtocolError(err);
    }
  });

  // Completions of a reachable server's prompt arguments (`<server>__<prompt>`, as listed) or
  // resource template variables, answered by that server. Like the lists, not recorded: they
  // return suggestions for what the closure already grants.
  server.setRequestHandler('completion/complete', async (request) => {
    const { ref, argument, context } = request.params;
    try {
      const reach = await reached();
      let target: Reached | undefined;
      let upstreamRef: CompleteParams['ref'];
      if (ref.type === 'ref/prompt') {
        // A kept name the last listing did not give is looked up in a fresh one.
        if (promptNames.isKept(ref.name) && !promptNames.knows(ref.name))
          await listPrompts(reach.servers);
        const found = promptNames.resolve(ref.name, reach.servers);
        target = found?.server;
        upstreamRef = { type: 'ref/prompt', name: found?.prompt ?? ref.name };
      } else {
        const owner = () => reach.servers.find((x) => x.id === templateOwners.get(ref.uri));
        target = owner() ?? (reach.servers.length === 1 ? reach.servers[0] : undefined);
        if (!target) {
          await listTemplates(reach.servers);
          target = owner();
        }
        upstreamRef = ref;
      }
      if (!target) return { completion: { values: [] } };
      const params: CompleteParams = {
        ref: upstreamRef,
        argument,
        ...(context ? { context } : {}),
      };
      return await mcp.readUpstream(p.tenant, target.id, (c, t) => c.complete(params, t));
    } catch (err) {
      throw toProtocolError(err);
    }
  });

  server.setRequestHandler('prompts/get', async (request, ctx) => {
    const { name, arguments: args } = request.params;
    const asked = {
      type: ReadType.prompt,
      sessionSha256: digestOf(ctx.sessionId),
      name,
      arguments: args,
    };
    try {
      const reach = await reached();
      // A kept name is looked up in a fresh listing: which server it names may have changed.
      if (promptNames.isKept(name)) await listPrompts(reach.servers);
      const found = promptNames.resolve(name, reach.servers);
      if (!found)
        throw await reads.refuse(
          asked,
          serverNamed(reach, promptNames.labelOf(name)),
          ReadRefusal.promptNotReachable,
          `Unknown prompt: ${name} is not a prompt of this agent (see prompts/list).`,
        );
      const { server: target, prompt } = found;
      const result = await reads.through({ ...asked, prompt }, target.id, (c, t) =>
        c.getPrompt(prompt, args, t),
      );
      return { ...result, _meta: tag(target, result._meta) };
    } catch (err) {
      throw toProtocolError(err);
    }
  });

  return async (serverId) => (await reached()).servers.some((x) => x.id === serverId);
}

/** What `completion/complete` asks of one upstream, with the agent's names turned into its. */
type CompleteParams = Parameters<UpstreamConnection['complete']>[0];

/** A name reduced to `[A-Za-z0-9-]`, so `<label>__<prompt>` splits at the first `__`. */
function plain(name: string): string {
  return name.replace(/[^A-Za-z0-9-]+/g, '-');
}

/** The session id as a read record keeps it: its digest, or null outside a session. */
function digestOf(sessionId: string | undefined): string | null {
  return sessionId ? sessionDigest(sessionId) : null;
}
