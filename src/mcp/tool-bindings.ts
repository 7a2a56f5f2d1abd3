import { isoTime } from '../core/index.js';
import type { AuditRecordDraft, Clock, OutboxEvent } from '../core/index.js';
import type { ToolDescriptor } from '../tools/index.js';
import type { DiscoveredTool, Discovery, McpBinding } from './mcp-binding.js';
import { annotationWarnings, mcpDescriptor } from './mcp-descriptor.js';
import type { BindingRequest } from './mcp-descriptor.js';
import type { McpServerRecord } from './mcp-server.js';
import type { McpStore, McpStoreChange } from './mcp-store.js';
import { diffTool } from './tool-digest.js';
import { audit, conflict, invalid, notFound, subject } from './mcp-ledger.js';
import { checkBindingRequest } from './mcp-input.js';
import type { DiscoveredLists } from './upstream/discovery.js';
import { planDiscovery } from './discovery-plan.js';
import type { KeyedSerial } from '../core/index.js';
import type { ServerLifecycle } from './server-lifecycle.js';

/** A binding made, with the descriptor to publish and warnings for the maintainer. */
export interface BindResult {
  binding: McpBinding;
  descriptor: ToolDescriptor;
  warnings: string[];
}

/** A re-approval: the binding, whether the input schema changed, and a descriptor to publish. */
export interface ReapproveResult {
  binding: McpBinding;
  inputSchemaChanged: boolean;
  /** A new descriptor version to publish, when one was asked for; null otherwise. */
  descriptor: ToolDescriptor | null;
}

/**
 * Checks that the descriptor a binding is about to publish will be taken (its id, version and
 * shape; the version not published with other content), before the binding is stored.
 * @throws GatehouseError as the tool registry refuses the publication.
 */
export type PublicationCheck = (descriptor: ToolDescriptor) => Promise<void>;

/** Collaborators of the {@link ToolBindings}, shared with the MCP service. */
interface ToolBindingsOptions {
  store: McpStore;
  clock: Clock;
  /** The per-server lock every change of a server runs under. */
  serial: KeyedSerial;
  lifecycle: Pick<ServerLifecycle, 'server'>;
}

/**
 * What discovery found and the bindings it governs: binding discovered tools, re-approving changed
 * ones, and storing each new discovery with its rug-pull defence (a bound tool whose digest changed
 * is unbound in the same write).
 */
export class ToolBindings {
  constructor(private readonly options: ToolBindingsOptions) {}

  /** Binds a discovered tool, under the server's lock. @throws as `McpService.bind`. */
  bind(
    tenant: string,
    id: string,
    actor: string,
    req: BindingRequest,
    check?: PublicationCheck,
  ): Promise<BindResult> {
    return this.options.serial.run(id, async () => {
      checkBindingRequest(req);
      const server = await this.options.lifecycle.server(tenant, id);
      if (server.state === 'registered' || server.state === 'retired')
        throw conflict(
          `Server ${id} is ${server.state}; bind tools of a verified or active server.`,
        );
      const found = await this.discovered(server, req.tool);
      const existing = await this.options.store.binding(tenant, id, req.tool);
      if (existing?.state === 'bound') {
        throw conflict(
          `Tool ${req.tool} of server ${id} is already bound to ${existing.descriptor.id}@${existing.descriptor.version}.`,
        );
      }
      const at = isoTime(this.options.clock.now());
      const binding: McpBinding = {
        tenant,
        serverId: id,
        tool: req.tool,
        digest: found.digest,
        approved: found.tool,
        descriptor: { ...req.descriptor },
        class: req.class,
        state: 'bound',
        change: null,
        boundBy: actor,
        at,
      };
      const descriptor = mcpDescriptor(id, found, { ...req.descriptor, class: req.class });
      await check?.(descriptor);
      const warnings = annotationWarnings(found, req.class);
      await this.write({ tenant, serverId: id, bindings: [binding] }, [
        audit(tenant, 'mcp.tool.bound', `${subject(id)}/tool/${req.tool}`, at, actor, {
          serverId: id,
          tool: req.tool,
          digest: found.digest,
          descriptor: req.descriptor,
          class: req.class,
          upstreamAnnotations: found.tool.annotations ?? null,
          warnings,
        }),
      ]);
      return { binding, descriptor, warnings };
    });
  }

  /** Re-approves an unbound tool, under the server's lock. @throws as `McpService.reapprove`. */
  reapprove(
    tenant: string,
    id: string,
    tool: string,
    actor: string,
    opts: { version?: string } = {},
    check?: PublicationCheck,
  ): Promise<ReapproveResult> {
    return this.options.serial.run(id, async () => {
      const server = await this.options.lifecycle.server(tenant, id);
      if (server.state === 'retired') throw conflict(`Server ${id} is retired.`);
      const b = await this.options.store.binding(tenant, id, tool);
      if (!b) throw notFound(`Tool ${tool} of server ${id} was never bound; bind it instead.`);
      if (b.state === 'bound')
        throw conflict(`Tool ${tool} of server ${id} is bound; nothing to re-approve.`);
      const found = await this.discovered(server, tool);
      const changes = diffTool(b.approved, found.tool);
      const inputSchemaChanged = changes.some((c) => c.field === 'inputSchema');
      const version = opts.version ?? b.descriptor.version;
      if (inputSchemaChanged && version === b.descriptor.version) {
        throw invalid(
          `The input schema of ${tool} changed; give a new version of ${b.descriptor.id} to publish (it is ${b.descriptor.version}).`,
          '/version',
        );
      }
      const at = isoTime(this.options.clock.now());
      const binding: McpBinding = {
        ...b,
        digest: found.digest,
        approved: found.tool,
        descriptor: { id: b.descriptor.id, version },
        state: 'bound',
        change: null,
        boundBy: actor,
        at,
      };
      const descriptor =
        version === b.descriptor.version
          ? null
          : mcpDescriptor(id, found, { id: b.descriptor.id, version, class: b.class });
      if (descriptor) await check?.(descriptor);
      await this.write({ tenant, serverId: id, bindings: [binding] }, [
        audit(tenant, 'mcp.tool.reapproved', `${subject(id)}/tool/${tool}`, at, actor, {
          serverId: id,
          tool,
          oldDigest: b.digest,
          digest: found.digest,
          changes,
          descriptor: binding.descriptor,
        }),
      ]);
      return { binding, inputSchemaChanged, descriptor };
    });
  }

  /**
   * Stores a discovery and unbinds every bound tool whose digest changed, atomically. The caller
   * holds the server's lock. @throws GatehouseError CONFLICT (the server changed meanwhile).
   */
  async applyDiscovery(server: McpServerRecord, lists: DiscoveredLists): Promise<void> {
    await this.apply(server, await this.options.store.discovery(server.tenant, server.id), lists);
  }

  /**
   * {@link applyDiscovery} of a tools list alone (a health probe's), keeping the resources and
   * prompts of the stored discovery. The caller holds the server's lock.
   */
  async applyTools(server: McpServerRecord, tools: DiscoveredLists['tools']): Promise<void> {
    const prev = await this.options.store.discovery(server.tenant, server.id);
    await this.apply(server, prev, {
      tools,
      resources: prev?.resources ?? [],
      prompts: prev?.prompts ?? [],
    });
  }

  private async apply(
    server: McpServerRecord,
    prev: Discovery | undefined,
    lists: DiscoveredLists,
  ): Promise<void> {
    const { tenant, id } = server;
    const plan = planDiscovery(
      prev,
      await this.options.store.bindings(tenant, id),
      this.discoveryOf(server, lists),
    );
    if (!plan) return;
    await this.write(
      { tenant, serverId: id, discovery: plan.discovery, bindings: plan.bindings },
      plan.audit,
      plan.events,
    );
  }

  /** The discovery record of what `lists` holds, stamped now. */
  discoveryOf(server: McpServerRecord, lists: DiscoveredLists): Discovery {
    return {
      serverId: server.id,
      tenant: server.tenant,
      tools: lists.tools,
      resources: lists.resources,
      prompts: lists.prompts,
      at: isoTime(this.options.clock.now()),
    };
  }

  private async write(
    change: McpStoreChange,
    auditRecords: AuditRecordDraft[],
    events: OutboxEvent[] = [],
  ): Promise<void> {
    if (!(await this.options.store.update(change, { audit: auditRecords, events })))
      throw conflict(`Server ${change.serverId} changed meanwhile; try again.`);
  }

  private async discovered(server: McpServerRecord, tool: string): Promise<DiscoveredTool> {
    const d = await this.options.store.discovery(server.tenant, server.id);
    const found = d?.tools.find((t) => t.tool.name === tool);
    if (!found) {
      const names = (d?.tools ?? []).map((t) => t.tool.name);
      // Named so a typo can be corrected; a server listing hundreds is cut (mcp show has them all).
      const shown =
        names.slice(0, 20).join(', ') +
        (names.length > 20 ? `, and ${names.length - 20} more` : '');
      throw notFound(
        `Server ${server.id} does not list a tool named ${JSON.stringify(tool)}; it lists ${names.length > 0 ? shown : 'no tools'}.`,
      );
    }
    return found;
  }
}
