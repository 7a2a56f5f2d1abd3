import { ErrorCode, EventType, GatehouseError, isoTime } from '../core/index.js';
import type { Clock, IdGenerator } from '../core/index.js';
import { canTransitionMcpServer, transitionMcpServer } from './mcp-server.js';
import type { McpServerRecord, McpServerState, McpTransport } from './mcp-server.js';
import type { McpStore, McpStoreChange } from './mcp-store.js';
import type { McpSettings } from './mcp-service-options.js';
import { serverIdentity } from './server-identity.js';
import { audit, conflict, event, invalid, notFound, subject } from './mcp-ledger.js';
import { normalizeTransport, redactTransport } from './mcp-input.js';

/** What a maintainer asks to register. */
export interface RegisterServer {
  name: string;
  transport: McpTransport;
}

/** Collaborators and settings of the {@link ServerLifecycle}. */
interface ServerLifecycleOptions {
  store: McpStore;
  clock: Clock;
  ids: IdGenerator;
  settings: Pick<McpSettings, 'checkUrl' | 'protectedDirs'>;
  /** Whether stdio servers registered now run in a sandbox (a launcher is configured). */
  sandboxed: boolean;
}

/**
 * Registration of upstream servers and their lifecycle transitions, each stored with its audit
 * record and McpServerStateChanged event. Callers hold the server's lock.
 */
export class ServerLifecycle {
  constructor(private readonly options: ServerLifecycleOptions) {}

  /** Registers a server in state `registered`. @throws as `McpService.register`. */
  async register(tenant: string, actor: string, input: RegisterServer): Promise<McpServerRecord> {
    const { checkUrl, protectedDirs } = this.options.settings;
    const transport = normalizeTransport(input.transport, checkUrl, protectedDirs);
    const name = input.name.trim();
    if (name === '') throw invalid('/name must be a non-empty string.', '/name');
    const at = isoTime(this.options.clock.now());
    const server: McpServerRecord = {
      id: `mcp_${this.options.ids.next()}`,
      tenant,
      name,
      transport,
      identity: serverIdentity(transport),
      state: 'registered',
      ...(transport.type === 'stdio' ? { sandboxed: this.options.sandboxed } : {}),
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
    const ok = await this.options.store.create(server, {
      audit: [audit(tenant, 'mcp.server.registered', server.id, at, actor, data)],
      events: [event(EventType.McpServerStateChanged, tenant, server.id, at, data)],
    });
    if (!ok) {
      throw new GatehouseError(
        ErrorCode.CONFLICT,
        `A server with the same identity (${server.identity.slice(0, 12)}…: same command, arguments and writable directories, or URL) is already registered; renaming does not make it another server.`,
        { details: { identity: server.identity } },
      );
    }
    return server;
  }

  /** The server. @throws GatehouseError NOT_FOUND. */
  async server(tenant: string, id: string): Promise<McpServerRecord> {
    const s = await this.options.store.get(tenant, id);
    if (!s) throw notFound(`MCP server ${JSON.stringify(id)} does not exist.`);
    return s;
  }

  /**
   * One lifecycle transition, with its audit record and McpServerStateChanged event; `extra` is
   * stored in the same write.
   * @throws GatehouseError CONFLICT (an illegal move, or the server changed meanwhile).
   */
  async move(
    server: McpServerRecord,
    to: McpServerState,
    actor: string,
    reason: string | null,
    extra: Omit<McpStoreChange, 'tenant' | 'serverId' | 'server'> = {},
    details: Record<string, unknown> = {},
  ): Promise<McpServerRecord> {
    if (!canTransitionMcpServer(server.state, to))
      throw conflict(`Server ${server.id} is ${server.state}; it cannot become ${to}.`);
    const at = isoTime(this.options.clock.now());
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
    const ok = await this.options.store.update(
      { tenant: server.tenant, serverId: server.id, server: next, ...extra },
      {
        audit: [audit(server.tenant, `mcp.server.${to}`, subject(server.id), at, actor, data)],
        events: [event(EventType.McpServerStateChanged, server.tenant, server.id, at, data)],
      },
    );
    if (!ok) throw conflict(`Server ${server.id} changed meanwhile; read it again.`);
    return next;
  }
}
