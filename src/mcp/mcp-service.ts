import { ErrorCode, GatehouseError, ResourceLifecycle } from '../core/index.js';
import { describeError } from './upstream/call-outcome.js';
import type { Discovery, McpBinding } from './mcp-binding.js';
import type { BindingRequest } from './mcp-descriptor.js';
import type { McpServerRecord, McpServerState } from './mcp-server.js';
import { conflict } from './mcp-ledger.js';
import { mcpSettings } from './mcp-service-options.js';
import type { McpServiceOptions, McpSettings } from './mcp-service-options.js';
import type { McpStore } from './mcp-store.js';
import type { UpstreamConnection } from './upstream/connection.js';
import type { DiscoveredLists } from './upstream/discovery.js';
import type { UpstreamPool } from './upstream/pool.js';
import { createUpstreamPool } from './create-upstream-pool.js';
import { credentialCode } from './credential-code.js';
import { KeyedSerial } from '../core/index.js';
import { ServerLifecycle } from './server-lifecycle.js';
import type { RegisterServer } from './server-lifecycle.js';
import { ToolBindings } from './tool-bindings.js';
import type { BindResult, PublicationCheck, ReapproveResult } from './tool-bindings.js';
import { McpHealth } from './mcp-health.js';
import { McpWatchers, WatchedMcpStore } from './mcp-watchers.js';
import type { McpWatcher } from './mcp-watchers.js';
import { UpstreamCalls } from './upstream-calls.js';
import type { CallReadiness } from './upstream-calls.js';
import type { UpstreamView } from './upstream-view.js';

/** A server with what discovery found and its bindings. */
export interface McpServerView {
  server: McpServerRecord;
  discovery: Discovery | null;
  bindings: McpBinding[];
}

/**
 * Upstream MCP servers (DESIGN §5): registration, the lifecycle, discovery with its rug-pull
 * defence, bindings, the health probe and the pooled connections. `close()` ends every upstream
 * session and reaps every stdio process.
 */
export class McpService {
  private readonly serial = new KeyedSerial();
  private readonly pool: UpstreamPool;
  private readonly lifecycle: ServerLifecycle;
  private readonly bindings: ToolBindings;
  private readonly health: McpHealth;
  private readonly calls: UpstreamCalls;
  private readonly pendingRediscovery = new Set<string>();
  /** `created`, `open` once started (the health probe runs), `closing`, `closed`. */
  private readonly state = new ResourceLifecycle('the MCP service', 'created');
  private readonly store: McpStore;
  private readonly settings: McpSettings;

  private readonly watchers = new McpWatchers();

  constructor(options: McpServiceOptions) {
    const { clock, ids } = options;
    const store = new WatchedMcpStore(options.store, this.watchers);
    const settings = mcpSettings(options);
    const serial = this.serial;
    const pool = createUpstreamPool(options, settings, {
      onListChanged: (server) => this.scheduleRediscovery(server.tenant, server.id),
      onLost: (server) => this.health.reprobeSoon(server.tenant, server.id),
      onNotice: (server, notice) => this.watchers.notice(server, notice),
      onConnected: (server) => this.watchers.connected(server),
    });
    const sandboxed = options.stdioLauncher !== undefined;
    const lifecycle = new ServerLifecycle({ store, clock, ids, settings, sandboxed });
    const bindings = new ToolBindings({ store, clock, serial, lifecycle });
    const rediscover = (tenant: string, id: string) => this.rediscover(tenant, id);
    this.store = store;
    this.settings = settings;
    this.pool = pool;
    this.lifecycle = lifecycle;
    this.bindings = bindings;
    this.health = new McpHealth({ store, pool, serial, lifecycle, bindings, settings });
    this.calls = new UpstreamCalls({ store, pool, lifecycle, rediscover, settings });
  }

  /**
   * Tells `watcher` of each stored change of a server, its discovery or bindings made on this
   * node, and of what upstream servers tell outside calls. Returns its removal.
   */
  watch(watcher: McpWatcher): () => void {
    return this.watchers.add(watcher);
  }

  /** Starts the health probe on its schedule. Safe to repeat; does nothing once closed. */
  start(): void {
    if (!this.state.is('created')) return;
    this.state.to('open');
    this.health.start();
  }

  /**
   * Stops the probe and closes every upstream connection (stdio processes are killed). Safe to
   * call twice: a later call waits for the first.
   */
  close(): Promise<void> {
    return this.state.close(async () => {
      this.health.close();
      await this.pool.close();
    });
  }

  /**
   * Registers a server in state `registered`.
   * @throws GatehouseError INVALID_INPUT (bad transport, URL refused by the egress check),
   *   CONFLICT (a server with the same identity is registered and not retired).
   */
  async register(tenant: string, actor: string, input: RegisterServer): Promise<McpServerRecord> {
    return this.lifecycle.register(tenant, actor, input);
  }

  /** A tenant's servers, oldest first. */
  list(tenant: string): Promise<McpServerRecord[]> {
    return this.store.list(tenant);
  }

  /** A server with its discovery and bindings. @throws GatehouseError NOT_FOUND. */
  async get(tenant: string, id: string): Promise<McpServerView> {
    const server = await this.lifecycle.server(tenant, id);
    return {
      server,
      discovery: (await this.store.discovery(tenant, id)) ?? null,
      bindings: await this.store.bindings(tenant, id),
    };
  }

  /**
   * Handshake and discovery. Moves a registered server to `verified`; for a verified, active or
   * degraded one it runs discovery again (unbinding changed tools).
   * @throws GatehouseError NOT_FOUND, CONFLICT (retired), UNAVAILABLE (handshake or discovery failed).
   */
  verify(tenant: string, id: string, actor: string): Promise<McpServerView> {
    return this.serial.run(id, async () => {
      const server = await this.lifecycle.server(tenant, id);
      if (server.state === 'retired') throw conflict(`Server ${id} is retired; retired is final.`);
      let lists: DiscoveredLists;
      try {
        const { conn } = await this.pool.get(server);
        lists = await conn.discover(this.settings.requestTimeoutMs);
      } catch (err) {
        await this.pool.drop(id);
        throw new GatehouseError(
          credentialCode(err) ?? ErrorCode.UNAVAILABLE,
          `Could not verify server ${id}: ${describeError(err)}`,
          { cause: err },
        );
      }
      if (server.state === 'registered') {
        const discovery = this.bindings.discoveryOf(server, lists);
        await this.lifecycle.move(
          server,
          'verified',
          actor,
          null,
          { discovery },
          {
            tools: lists.tools.map((t) => ({ name: t.tool.name, digest: t.digest })),
            resources: lists.resources.length,
            prompts: lists.prompts.length,
          },
        );
      } else {
        await this.bindings.applyDiscovery(server, lists);
      }
      return this.get(tenant, id);
    });
  }

  /**
   * Makes a verified server active (an admin's or maintainer's action; the caller checks roles).
   * @throws GatehouseError NOT_FOUND, CONFLICT (not verified).
   */
  activate(tenant: string, id: string, actor: string): Promise<McpServerRecord> {
    return this.serial.run(id, async () => {
      const server = await this.lifecycle.server(tenant, id);
      if (server.state !== 'verified')
        throw conflict(`Server ${id} is ${server.state}; only a verified server can be activated.`);
      this.health.forget(id);
      return this.lifecycle.move(server, 'active', actor, null);
    });
  }

  /**
   * Retires a server: final. Its connection is closed and its process killed.
   * @throws GatehouseError NOT_FOUND, CONFLICT (already retired).
   */
  retire(tenant: string, id: string, actor: string, reason = 'retired'): Promise<McpServerRecord> {
    return this.serial.run(id, async () => {
      const server = await this.lifecycle.server(tenant, id);
      if (server.state === 'retired') throw conflict(`Server ${id} is already retired.`);
      const moved = await this.lifecycle.move(server, 'retired', actor, reason);
      this.health.forget(id);
      await this.pool.release(id);
      return moved;
    });
  }

  /**
   * Binds a discovered tool to a descriptor of kind `mcp` with the maintainer's class. Returns
   * the descriptor for the caller to publish through the tool registry; `check` (when given) is
   * asked first whether that publication will be taken, so a refused one stores no binding.
   * @throws GatehouseError INVALID_INPUT, NOT_FOUND (server or tool), CONFLICT (server not
   *   verified, active or degraded; the tool already bound), or what `check` throws.
   */
  bind(
    tenant: string,
    id: string,
    actor: string,
    req: BindingRequest,
    check?: PublicationCheck,
  ): Promise<BindResult> {
    return this.bindings.bind(tenant, id, actor, req, check);
  }

  /**
   * Accepts the tool as the upstream lists it now, after a change unbound it. When its input
   * schema changed a new descriptor version must be given (`version`); the new descriptor is
   * returned for the caller to publish, and the binding then names that version.
   * @throws GatehouseError NOT_FOUND, CONFLICT (not awaiting re-approval, or gone upstream),
   *   INVALID_INPUT (input schema changed and no new version given), or what `check` throws of
   *   the new version's publication (then nothing is re-approved).
   */
  reapprove(
    tenant: string,
    id: string,
    tool: string,
    actor: string,
    opts: { version?: string } = {},
    check?: PublicationCheck,
  ): Promise<ReapproveResult> {
    return this.bindings.reapprove(tenant, id, tool, actor, opts, check);
  }

  /** Runs discovery again now (as on `list_changed`). @throws as {@link verify}. */
  async rediscover(tenant: string, id: string): Promise<McpServerView> {
    return this.verify(tenant, id, 'system');
  }

  /**
   * One health probe of an active or degraded server: ping and tools/list (comparing digests).
   * After `failuresToDegrade` failures in a row an active server turns degraded; a success turns
   * a degraded one active. Never throws for an unhealthy server.
   * @returns the server's state afterwards.
   */
  probe(tenant: string, id: string): Promise<McpServerState> {
    return this.health.probe(tenant, id);
  }

  /** The process id of a stdio server's open connection, or null (none open, or HTTP). */
  async connectionPid(tenant: string, id: string): Promise<number | null> {
    await this.lifecycle.server(tenant, id);
    return this.pool.peek(id)?.pid ?? null;
  }

  /**
   * Whether a call of `descriptor` may go upstream now, and the connection it goes through: the
   * server active, the tool bound to exactly this descriptor version, listed upstream with the
   * approved digest.
   */
  async readyToCall(
    tenant: string,
    serverId: string,
    tool: string,
    descriptor: { id: string; version: string },
  ): Promise<CallReadiness> {
    return this.calls.readyToCall(tenant, serverId, tool, descriptor);
  }

  /**
   * Whether a call of `descriptor` could go upstream now, without opening a connection: the
   * server active, the tool bound to this descriptor version and listed upstream with the approved
   * digest (stored state), and the server not known to be unreachable (its last connection attempt
   * failed). The MCP endpoint lists only such tools.
   */
  async isCallable(
    tenant: string,
    serverId: string,
    tool: string,
    descriptor: { id: string; version: string },
  ): Promise<boolean> {
    return this.calls.view(tenant).isCallable(serverId, tool, descriptor);
  }

  /**
   * Whether the agent's closure reaches this tool by the stored state alone: the server active,
   * the tool bound to this descriptor version and listed with the approved digest. Unlike
   * {@link isCallable} it ignores a failed reconnect: the pass-through of resources and prompts
   * decides by it what an agent may reach, so an outage is the upstream's error, not a refusal.
   */
  isBound(
    tenant: string,
    serverId: string,
    tool: string,
    descriptor: { id: string; version: string },
  ): Promise<boolean> {
    return this.calls.view(tenant).isBound(serverId, tool, descriptor);
  }

  /**
   * The tenant's upstream servers as stored now, for one request that asks {@link isCallable} or
   * {@link isBound} of many tools (the MCP endpoint's `tools/list`, and the servers its resources
   * and prompts reach): the tenant's servers are read once, and each server's bindings and
   * discovery once, when a tool of it is first asked about, so the reads grow with the servers
   * and not with the tools. Make one per request and drop it: it does not see later changes.
   */
  view(tenant: string): UpstreamView {
    return this.calls.view(tenant);
  }

  /**
   * Runs a read-only request (resources, prompts) on an active server of the tenant through its
   * pooled connection, with the request timeout. Recording is the caller's (the MCP endpoint
   * records each read: RecordedReads).
   * @throws GatehouseError NOT_FOUND (no such server), UNAVAILABLE (not active, unreachable,
   *   timed out), INVALID_INPUT (the upstream refused the request's parameters).
   */
  async readUpstream<T>(
    tenant: string,
    serverId: string,
    op: (conn: UpstreamConnection, timeoutMs: number) => Promise<T>,
  ): Promise<T> {
    return this.calls.readUpstream(tenant, serverId, op);
  }

  private scheduleRediscovery(tenant: string, id: string): void {
    if (this.state.isClosing || this.pendingRediscovery.has(id)) return;
    this.pendingRediscovery.add(id);
    setTimeout(() => {
      this.pendingRediscovery.delete(id);
      if (!this.state.isClosing) this.rediscover(tenant, id).catch(() => undefined);
    }, 20).unref();
  }
}
