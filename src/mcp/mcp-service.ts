import { ErrorCode, EventType, GatehouseError, isGatehouseError, isoTime } from '../core/index.js';
import type { AuditRecordDraft, Clock, IdGenerator, OutboxEvent } from '../core/index.js';
import type { ToolDescriptor } from '../tools/index.js';
import type { DiscoveredTool, Discovery, McpBinding } from './mcp-binding.js';
import { annotationWarnings, mcpDescriptor, mcpExecution } from './mcp-descriptor.js';
import type { BindingRequest } from './mcp-descriptor.js';
import { canTransitionMcpServer, transitionMcpServer } from './mcp-server.js';
import type { McpServerRecord, McpServerState, McpTransport } from './mcp-server.js';
import type { McpStore, McpStoreChange } from './mcp-store.js';
import { defaultCheckUrl, serverIdentity } from './server-identity.js';
import { diffTool } from './tool-digest.js';
import { audit, conflict, event, invalid, notFound, subject } from './mcp-ledger.js';
import { checkBindingRequest, normalizeTransport, redactTransport } from './mcp-input.js';
import type { CredentialNeed } from '../secrets/index.js';
import type {
  ConnectionCredentials,
  DiscoveredLists,
  StdioLauncher,
  UpstreamConnection,
} from './upstream-connection.js';
import { UpstreamPool } from './upstream-pool.js';
import type { UpstreamFetch } from './upstream-fetch.js';
import { checkCall } from './call-check.js';
import { planDiscovery } from './discovery-plan.js';

/** Collaborators and settings of the {@link McpService}. */
export interface McpServiceOptions {
  store: McpStore;
  clock: Clock;
  ids: IdGenerator;
  /**
   * Egress check of HTTP upstream URLs at registration: null when allowed, else why not. The URL
   * has passed {@link defaultCheckUrl} (a URL, http or https, no credentials) and the
   * credential needs their checks first. Default: nothing more.
   */
  checkUrl?: (url: string) => string | null;
  /**
   * Authorizes egress to an HTTP upstream for each new connection (reconnects too) and returns
   * the fetch its requests go through. Absent: the global fetch, no check at connect.
   * @throws Error saying why egress is refused; the connection fails (UNAVAILABLE,
   *   SERVER_UNAVAILABLE) and no credentials are issued.
   */
  connectHttp?: (url: URL) => Promise<UpstreamFetch>;
  /** Milliseconds between health probes (ping + tools/list, which is also the scheduled discovery). */
  probeIntervalMs?: number;
  /** Consecutive failed probes that turn an active server degraded. */
  failuresToDegrade?: number;
  /**
   * After a lost connection or a failed probe, the server is probed again this many milliseconds
   * later, doubling with each failure up to `probeIntervalMs`, so a dead upstream turns degraded
   * in seconds rather than after `failuresToDegrade` scheduled probes. Default 1000.
   */
  reprobeMs?: number;
  /** Milliseconds a probe, a handshake or a discovery request may take. */
  requestTimeoutMs?: number;
  /** First reconnect backoff; doubles up to `maxBackoffMs`. */
  baseBackoffMs?: number;
  maxBackoffMs?: number;
  /** Largest single message accepted from a stdio upstream (default 4 MiB). */
  maxMessageBytes?: number;
  /**
   * Issues the credentials a server's transport declares, for one connection, as broker leases
   * that `release()` ends. Without it, a server that declares credentials cannot connect.
   * @throws GatehouseError with the broker's code (CREDENTIAL_UNAVAILABLE, CREDENTIAL_SCOPE_DENIED…).
   */
  issueCredentials?: (
    tenant: string,
    serverId: string,
    needs: CredentialNeed[],
  ) => Promise<ConnectionCredentials>;
  /**
   * Runs stdio servers inside a sandbox lease (given when the sandbox is available). Given the
   * server, a launcher bound to it; servers registered without one run directly and their record
   * says `sandboxed: false`.
   */
  stdioLauncher?: (server: { tenant: string; id: string }) => StdioLauncher;
}

/** What a maintainer asks to register. */
export interface RegisterServer {
  name: string;
  transport: McpTransport;
}

/** A server with what discovery found and its bindings. */
export interface McpServerView {
  server: McpServerRecord;
  discovery: Discovery | null;
  bindings: McpBinding[];
}

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

/** Why a call cannot go upstream, or the connection and binding it goes through. */
export type CallReadiness =
  | { ok: true; conn: UpstreamConnection; binding: McpBinding }
  | { ok: false; code: string; message: string };

/**
 * Upstream MCP servers (DESIGN §5): registration, the lifecycle, discovery with its rug-pull
 * defence, bindings, the health probe and the pooled connections. `close()` ends every upstream
 * session and reaps every stdio process.
 */
export class McpService {
  private readonly pool: UpstreamPool;
  private readonly locks = new Map<string, Promise<unknown>>();
  private readonly failures = new Map<string, number>();
  private readonly pendingRediscovery = new Set<string>();
  private readonly reprobes = new Map<string, NodeJS.Timeout>();
  private timer: NodeJS.Timeout | null = null;
  private probing = false;
  private closed = false;
  private readonly s: Required<
    Omit<
      McpServiceOptions,
      'store' | 'clock' | 'ids' | 'issueCredentials' | 'stdioLauncher' | 'connectHttp'
    >
  >;

  constructor(private readonly o: McpServiceOptions) {
    this.s = {
      checkUrl: o.checkUrl ?? defaultCheckUrl,
      probeIntervalMs: o.probeIntervalMs ?? 30_000,
      failuresToDegrade: o.failuresToDegrade ?? 3,
      reprobeMs: o.reprobeMs ?? 1000,
      requestTimeoutMs: o.requestTimeoutMs ?? 10_000,
      baseBackoffMs: o.baseBackoffMs ?? 500,
      maxBackoffMs: o.maxBackoffMs ?? 30_000,
      maxMessageBytes: o.maxMessageBytes ?? 4 * 1024 * 1024,
    };
    this.pool = new UpstreamPool({
      connectTimeoutMs: this.s.requestTimeoutMs,
      maxMessageBytes: this.s.maxMessageBytes,
      baseBackoffMs: this.s.baseBackoffMs,
      maxBackoffMs: this.s.maxBackoffMs,
      now: () => this.o.clock.now(),
      onListChanged: (server) => this.scheduleRediscovery(server.tenant, server.id),
      onLost: (server) => this.reprobeSoon(server.tenant, server.id),
      credentials: (server) => this.credentialsFor(server),
      ...(o.connectHttp ? { connectHttp: o.connectHttp } : {}),
      launch: (server) =>
        server.transport.type === 'stdio' && server.sandboxed !== false
          ? this.o.stdioLauncher?.(server)
          : undefined,
    });
  }

  /** Issues the credentials a server declares for one connection; null when it declares none. */
  private async credentialsFor(server: McpServerRecord): Promise<ConnectionCredentials | null> {
    const needs = server.transport.credentials ?? [];
    if (needs.length === 0) return null;
    if (!this.o.issueCredentials)
      throw new GatehouseError(
        ErrorCode.CREDENTIAL_UNAVAILABLE,
        `MCP server ${server.id} declares ${needs.length} credential(s) but this gateway has no credential broker.`,
      );
    return this.o.issueCredentials(server.tenant, server.id, needs);
  }

  /** Starts the health probe on its schedule. Safe to repeat. */
  start(): void {
    if (this.timer || this.closed) return;
    this.timer = setInterval(() => void this.probeAll(), this.s.probeIntervalMs);
    this.timer.unref();
  }

  /** Stops the probe and closes every upstream connection (stdio processes are killed). */
  async close(): Promise<void> {
    this.closed = true;
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    for (const t of this.reprobes.values()) clearTimeout(t);
    this.reprobes.clear();
    await this.pool.close();
  }

  /**
   * Registers a server in state `registered`.
   * @throws GatehouseError INVALID_INPUT (bad transport, URL refused by the egress check),
   *   CONFLICT (a server with the same identity is registered and not retired).
   */
  async register(tenant: string, actor: string, input: RegisterServer): Promise<McpServerRecord> {
    const transport = normalizeTransport(input.transport, this.s.checkUrl);
    const name = input.name.trim();
    if (name === '') throw invalid('/name must be a non-empty string.', '/name');
    const at = isoTime(this.o.clock.now());
    const server: McpServerRecord = {
      id: `mcp_${this.o.ids.next()}`,
      tenant,
      name,
      transport,
      identity: serverIdentity(transport),
      state: 'registered',
      ...(transport.type === 'stdio' ? { sandboxed: this.o.stdioLauncher !== undefined } : {}),
      stateReason: null,
      version: 1,
      registeredBy: actor,
      createdAt: at,
      updatedAt: at,
    };
    const data = {
      serverId: server.id,
      name,
      identity: server.identity,
      transport: redactTransport(transport),
      ...(server.sandboxed === undefined ? {} : { sandboxed: server.sandboxed }),
      from: null,
      to: 'registered',
    };
    const ok = await this.o.store.create(server, {
      audit: [audit(tenant, 'mcp.server.registered', server.id, at, actor, data)],
      events: [event(EventType.McpServerStateChanged, tenant, server.id, at, data)],
    });
    if (!ok) {
      throw new GatehouseError(
        ErrorCode.CONFLICT,
        `A server with the same identity (${server.identity.slice(0, 12)}…: same command and arguments, or URL) is already registered; renaming does not make it another server.`,
        { details: { identity: server.identity } },
      );
    }
    return server;
  }

  /** A tenant's servers, oldest first. */
  list(tenant: string): Promise<McpServerRecord[]> {
    return this.o.store.list(tenant);
  }

  /** A server with its discovery and bindings. @throws GatehouseError NOT_FOUND. */
  async get(tenant: string, id: string): Promise<McpServerView> {
    const server = await this.server(tenant, id);
    return {
      server,
      discovery: (await this.o.store.discovery(tenant, id)) ?? null,
      bindings: await this.o.store.bindings(tenant, id),
    };
  }

  /**
   * Handshake and discovery. Moves a registered server to `verified`; for a verified, active or
   * degraded one it runs discovery again (unbinding changed tools).
   * @throws GatehouseError NOT_FOUND, CONFLICT (retired), UNAVAILABLE (handshake or discovery failed).
   */
  verify(tenant: string, id: string, actor: string): Promise<McpServerView> {
    return this.serial(id, async () => {
      const server = await this.server(tenant, id);
      if (server.state === 'retired') throw conflict(`Server ${id} is retired; retired is final.`);
      let lists: DiscoveredLists;
      try {
        const { conn } = await this.pool.get(server);
        lists = await conn.discover(this.s.requestTimeoutMs);
      } catch (err) {
        await this.pool.drop(id);
        throw new GatehouseError(
          credentialCode(err) ?? ErrorCode.UNAVAILABLE,
          `Could not verify server ${id}: ${(err as Error).message}`,
          { cause: err },
        );
      }
      if (server.state === 'registered') {
        const discovery = this.discoveryOf(server, lists);
        await this.move(
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
        await this.applyDiscovery(server, lists);
      }
      return this.get(tenant, id);
    });
  }

  /**
   * Makes a verified server active (an admin's or maintainer's action; the caller checks roles).
   * @throws GatehouseError NOT_FOUND, CONFLICT (not verified).
   */
  activate(tenant: string, id: string, actor: string): Promise<McpServerRecord> {
    return this.serial(id, async () => {
      const server = await this.server(tenant, id);
      if (server.state !== 'verified')
        throw conflict(`Server ${id} is ${server.state}; only a verified server can be activated.`);
      this.failures.delete(id);
      return this.move(server, 'active', actor, null);
    });
  }

  /**
   * Retires a server: final. Its connection is closed and its process killed.
   * @throws GatehouseError NOT_FOUND, CONFLICT (already retired).
   */
  retire(tenant: string, id: string, actor: string, reason = 'retired'): Promise<McpServerRecord> {
    return this.serial(id, async () => {
      const server = await this.server(tenant, id);
      if (server.state === 'retired') throw conflict(`Server ${id} is already retired.`);
      const moved = await this.move(server, 'retired', actor, reason);
      this.failures.delete(id);
      await this.pool.release(id);
      return moved;
    });
  }

  /**
   * Binds a discovered tool to a descriptor of kind `mcp` with the maintainer's class. Returns
   * the descriptor for the caller to publish through the tool registry.
   * @throws GatehouseError INVALID_INPUT, NOT_FOUND (server or tool), CONFLICT (server not
   *   verified, active or degraded; the tool already bound).
   */
  bind(tenant: string, id: string, actor: string, req: BindingRequest): Promise<BindResult> {
    return this.serial(id, async () => {
      checkBindingRequest(req);
      const server = await this.server(tenant, id);
      if (server.state === 'registered' || server.state === 'retired')
        throw conflict(
          `Server ${id} is ${server.state}; bind tools of a verified or active server.`,
        );
      const found = await this.discovered(server, req.tool);
      const existing = await this.o.store.binding(tenant, id, req.tool);
      if (existing?.state === 'bound') {
        throw conflict(
          `Tool ${req.tool} of server ${id} is already bound to ${existing.descriptor.id}@${existing.descriptor.version}.`,
        );
      }
      const at = isoTime(this.o.clock.now());
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

  /**
   * Accepts the tool as the upstream lists it now, after a change unbound it. When its input
   * schema changed a new descriptor version must be given (`version`); the new descriptor is
   * returned for the caller to publish, and the binding then names that version.
   * @throws GatehouseError NOT_FOUND, CONFLICT (not awaiting re-approval, or gone upstream),
   *   INVALID_INPUT (input schema changed and no new version given).
   */
  reapprove(
    tenant: string,
    id: string,
    tool: string,
    actor: string,
    opts: { version?: string } = {},
  ): Promise<ReapproveResult> {
    return this.serial(id, async () => {
      const server = await this.server(tenant, id);
      if (server.state === 'retired') throw conflict(`Server ${id} is retired.`);
      const b = await this.o.store.binding(tenant, id, tool);
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
      const at = isoTime(this.o.clock.now());
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
    return this.serial(id, async () => {
      const server = await this.server(tenant, id);
      if (server.state !== 'active' && server.state !== 'degraded') return server.state;
      try {
        const { conn, fresh } = await this.pool.get(server);
        await conn.ping(this.s.requestTimeoutMs);
        if (fresh) {
          await this.applyDiscovery(server, await conn.discover(this.s.requestTimeoutMs));
        } else {
          const prev = await this.o.store.discovery(tenant, id);
          const tools = await conn.listTools(this.s.requestTimeoutMs);
          await this.applyDiscovery(server, {
            tools,
            resources: prev?.resources ?? [],
            prompts: prev?.prompts ?? [],
          });
        }
        this.failures.set(id, 0);
        const now = await this.server(tenant, id);
        if (now.state === 'degraded') return (await this.move(now, 'active', 'system', null)).state;
        return now.state;
      } catch (err) {
        await this.pool.drop(id);
        const n = (this.failures.get(id) ?? 0) + 1;
        this.failures.set(id, n);
        const now = await this.server(tenant, id);
        this.reprobeSoon(tenant, id);
        if (now.state === 'active' && n >= this.s.failuresToDegrade) {
          const reason = `${n} health probes failed in a row; last: ${(err as Error).message}`;
          return (await this.move(now, 'degraded', 'system', reason)).state;
        }
        return now.state;
      }
    });
  }

  /** The process id of a stdio server's open connection, or null (none open, or HTTP). */
  async connectionPid(tenant: string, id: string): Promise<number | null> {
    await this.server(tenant, id);
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
    const first = await checkCall(this.o.store, tenant, serverId, tool, descriptor);
    if (!first.ok) return first;
    const server = first.server;
    let pooled;
    try {
      pooled = await this.pool.get(server);
    } catch (err) {
      return {
        ok: false,
        code: credentialCode(err) ?? 'SERVER_UNAVAILABLE',
        message: `MCP server ${serverId} cannot be reached: ${(err as Error).message}`,
      };
    }
    if (!pooled.fresh) return { ok: true, conn: pooled.conn, binding: first.binding };
    // A new connection: the tools may have changed while it was down; discover before calling.
    try {
      await this.rediscover(tenant, serverId);
    } catch (err) {
      return {
        ok: false,
        code: 'SERVER_UNAVAILABLE',
        message: `MCP server ${serverId} reconnected but discovery failed: ${(err as Error).message}`,
      };
    }
    const again = await checkCall(this.o.store, tenant, serverId, tool, descriptor);
    if (!again.ok) return again;
    const conn = this.pool.peek(serverId);
    if (!conn)
      return {
        ok: false,
        code: 'SERVER_UNAVAILABLE',
        message: `MCP server ${serverId} disconnected`,
      };
    return { ok: true, conn, binding: again.binding };
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
    if (this.pool.unreachable(serverId)) return false;
    return (await checkCall(this.o.store, tenant, serverId, tool, descriptor)).ok;
  }

  /**
   * {@link isCallable} for a descriptor of kind `mcp` (its execution names server and tool);
   * false for any other descriptor.
   */
  async descriptorCallable(tenant: string, descriptor: ToolDescriptor): Promise<boolean> {
    const exec = descriptor.kind === 'mcp' ? mcpExecution(descriptor) : null;
    return exec !== null && this.isCallable(tenant, exec.server, exec.tool, descriptor);
  }

  /**
   * Runs a read-only request (resources, prompts) on an active server of the tenant through its
   * pooled connection, with the request timeout. Recording is the caller's (the MCP endpoint
   * records each read: http/mcp-endpoint-reads.ts).
   * @throws GatehouseError NOT_FOUND (no such server), UNAVAILABLE (not active, unreachable,
   *   timed out), INVALID_INPUT (the upstream refused the request's parameters).
   */
  async readUpstream<T>(
    tenant: string,
    serverId: string,
    op: (conn: UpstreamConnection, timeoutMs: number) => Promise<T>,
  ): Promise<T> {
    const server = await this.server(tenant, serverId);
    if (server.state !== 'active')
      throw new GatehouseError(
        ErrorCode.UNAVAILABLE,
        `MCP server ${serverId} is ${server.state}, not active.`,
      );
    let conn: UpstreamConnection;
    try {
      conn = (await this.pool.get(server)).conn;
    } catch (err) {
      throw new GatehouseError(
        ErrorCode.UNAVAILABLE,
        `MCP server ${serverId} cannot be reached: ${(err as Error).message}`,
        { cause: err },
      );
    }
    try {
      return await op(conn, this.s.requestTimeoutMs);
    } catch (err) {
      const code = (err as { code?: unknown }).code;
      const message = err instanceof Error ? err.message : String(err);
      // -32602 invalid params, -32002 resource not found: the request's fault, not the server's.
      if (code === -32602 || code === -32002)
        throw new GatehouseError(
          ErrorCode.INVALID_INPUT,
          `MCP server ${server.name} refused: ${message}`,
        );
      throw new GatehouseError(
        ErrorCode.UNAVAILABLE,
        `MCP server ${server.name} failed to answer: ${message}`,
        { cause: err },
      );
    }
  }

  private async probeAll(): Promise<void> {
    if (this.probing || this.closed) return;
    this.probing = true;
    try {
      const servers = await this.o.store.listInStates(['active', 'degraded']);
      await Promise.all(servers.map((s) => this.probe(s.tenant, s.id).catch(() => undefined)));
    } finally {
      this.probing = false;
    }
  }

  /** Probes the server again soon (see `reprobeMs`); one pending re-probe per server. */
  private reprobeSoon(tenant: string, id: string): void {
    if (this.closed || this.reprobes.has(id)) return;
    const n = Math.max(1, this.failures.get(id) ?? 0);
    const delay = Math.min(this.s.reprobeMs * 2 ** (n - 1), this.s.probeIntervalMs);
    const timer = setTimeout(() => {
      this.reprobes.delete(id);
      if (!this.closed) this.probe(tenant, id).catch(() => undefined);
    }, delay);
    timer.unref();
    this.reprobes.set(id, timer);
  }

  private scheduleRediscovery(tenant: string, id: string): void {
    if (this.closed || this.pendingRediscovery.has(id)) return;
    this.pendingRediscovery.add(id);
    setTimeout(() => {
      this.pendingRediscovery.delete(id);
      if (!this.closed) this.rediscover(tenant, id).catch(() => undefined);
    }, 20).unref();
  }

  /** Stores a discovery and unbinds every bound tool whose digest changed, atomically. */
  private async applyDiscovery(server: McpServerRecord, lists: DiscoveredLists): Promise<void> {
    const { tenant, id } = server;
    const plan = planDiscovery(
      await this.o.store.discovery(tenant, id),
      await this.o.store.bindings(tenant, id),
      this.discoveryOf(server, lists),
    );
    if (!plan) return;
    await this.write(
      { tenant, serverId: id, discovery: plan.discovery, bindings: plan.bindings },
      plan.audit,
      plan.events,
    );
  }

  private discoveryOf(server: McpServerRecord, lists: DiscoveredLists): Discovery {
    return {
      serverId: server.id,
      tenant: server.tenant,
      tools: lists.tools,
      resources: lists.resources,
      prompts: lists.prompts,
      at: isoTime(this.o.clock.now()),
    };
  }

  /** One lifecycle transition, with its audit record and McpServerStateChanged event. */
  private async move(
    server: McpServerRecord,
    to: McpServerState,
    actor: string,
    reason: string | null,
    extra: Omit<McpStoreChange, 'tenant' | 'serverId' | 'server'> = {},
    details: Record<string, unknown> = {},
  ): Promise<McpServerRecord> {
    if (!canTransitionMcpServer(server.state, to))
      throw conflict(`Server ${server.id} is ${server.state}; it cannot become ${to}.`);
    const at = isoTime(this.o.clock.now());
    const next: McpServerRecord = {
      ...server,
      state: transitionMcpServer(server.state, to),
      stateReason: reason,
      version: server.version + 1,
      updatedAt: at,
    };
    const data = {
      serverId: server.id,
      name: server.name,
      from: server.state,
      to,
      reason,
      ...details,
    };
    const ok = await this.o.store.update(
      { tenant: server.tenant, serverId: server.id, server: next, ...extra },
      {
        audit: [audit(server.tenant, `mcp.server.${to}`, subject(server.id), at, actor, data)],
        events: [event(EventType.McpServerStateChanged, server.tenant, server.id, at, data)],
      },
    );
    if (!ok) throw conflict(`Server ${server.id} changed meanwhile; read it again.`);
    return next;
  }

  private async write(
    change: McpStoreChange,
    auditRecords: AuditRecordDraft[],
    events: OutboxEvent[] = [],
  ): Promise<void> {
    if (!(await this.o.store.update(change, { audit: auditRecords, events })))
      throw conflict(`Server ${change.serverId} changed meanwhile; try again.`);
  }

  private async server(tenant: string, id: string): Promise<McpServerRecord> {
    const s = await this.o.store.get(tenant, id);
    if (!s) throw notFound(`MCP server ${JSON.stringify(id)} does not exist.`);
    return s;
  }

  private async discovered(server: McpServerRecord, tool: string): Promise<DiscoveredTool> {
    const d = await this.o.store.discovery(server.tenant, server.id);
    const found = d?.tools.find((t) => t.tool.name === tool);
    if (!found)
      throw notFound(`Server ${server.id} does not list a tool named ${JSON.stringify(tool)}.`);
    return found;
  }

  /** Runs `fn` after every earlier operation on the same server has finished. */
  private serial<T>(id: string, fn: () => Promise<T>): Promise<T> {
    const prev = this.locks.get(id) ?? Promise.resolve();
    const run = prev.then(fn, fn);
    const tail = run.catch(() => undefined);
    this.locks.set(id, tail);
    void tail.then(() => {
      if (this.locks.get(id) === tail) this.locks.delete(id);
    });
    return run;
  }
}

/** The broker's error code when `err` is a credential failure, else undefined. */
function credentialCode(err: unknown): ErrorCode | undefined {
  if (!isGatehouseError(err)) return undefined;
  return err.code.startsWith('CREDENTIAL_') || err.code === ErrorCode.INVALID_DESCRIPTOR
    ? err.code
    : undefined;
}
