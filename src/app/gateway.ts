import { AccessTokenVerifier } from '../oauth/index.js';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import type { Server as TlsServer } from 'node:tls';
import type { Logger } from 'pino';
import { ResourceLifecycle, monotonicIds, systemClock } from '../core/index.js';
import type { Clock, IdGenerator } from '../core/index.js';
import { AuditLog, recentJwks } from '../audit/index.js';
import type { Keyring } from '../audit/index.js';
import { ApprovalService } from '../approvals/index.js';
import { HttpExecutor, McpExecutor, NativeExecutor } from '../executors/index.js';
import { GatewayMetrics, buildServer, loadStudioFiles } from '../http/index.js';
import {
  InvocationService,
  PendingOutcomes,
  Pipeline,
  UncertainEffects,
  recoverInterrupted,
} from '../invocation/index.js';
import type { Executor, InvocationRecord } from '../invocation/index.js';
import { CedarEngine, TenantPolicy } from '../policy/index.js';
import { SecretCipher } from '../secrets/index.js';
import type { SecretService } from '../secrets/index.js';
import { DataDirLock, FileArtifactStore } from '../storage/index.js';
import type { SqliteDatabase } from '../storage/index.js';
import { Directory, SessionBook } from '../tenancy/index.js';
import { JsonSchemaValidator, ToolRegistry } from '../tools/index.js';
import { GatewayEgress } from '../egress/index.js';
import { McpService } from '../mcp/index.js';
import type { GatewayConfig } from './config.js';
import { MAX_MESSAGE_BYTES_SETTING } from './mcp-config.js';
import { readTls } from './tls-config.js';
import { openExecution } from './open-execution.js';
import { openStorage } from './open-storage.js';
import { openKeyring } from './open-keyring.js';
import type { Storage } from './open-storage.js';
import type { Execution } from './open-execution.js';
import { createLogger } from './logger.js';
import { mcpReachOf } from './reach-config.js';
import { openTracing } from './tracing.js';
import { checkNodeId, nodeIdOf } from './node-identity.js';
import { NodeWatch } from './node-watch.js';
import { reapTakenOverLocally } from './reap-taken-over.js';
import type { Tracing } from './tracing.js';

/** The version the gateway reports (OpenAPI, MCP, spans' `service.version`). */
const VERSION = '0.1.0';

/** How long the credential leases of one upstream MCP connection last at most. */
const MCP_CREDENTIAL_TTL_MS = 24 * 60 * 60 * 1000;

/** Options of {@link Gateway.open} beyond the configuration; tests inject clock and ids. */
export interface GatewayDeps {
  clock?: Clock;
  ids?: IdGenerator;
  /** Registers native handlers before descriptors are loaded. */
  nativeHandlers?: (native: NativeExecutor) => void;
  /** The log (default JSON lines on standard error at `config.logLevel`). */
  logger?: Logger;
  /**
   * Starts services that run beside the gateway (the demo's ticket service), once the gateway
   * holds its data directory and before its sandboxes and egress are set up, so they may extend
   * `config`. The gateway closes each of them when it closes (or fails to open).
   */
  companions?: (config: GatewayConfig) => Promise<Companion[]>;
}

/** A service the gateway runs beside it and closes with it. */
export interface Companion {
  close(): Promise<void>;
}

/** The wired parts of a gateway. */
interface GatewayParts {
  config: GatewayConfig;
  storage: Storage;
  keyring: Keyring;
  directory: Directory;
  registry: ToolRegistry;
  policy: TenantPolicy;
  invocations: InvocationService;
  approvals: ApprovalService;
  uncertain: UncertainEffects;
  secrets: SecretService;
  execution: Execution;
  mcp: McpService;
  auditLog: AuditLog;
  server: FastifyInstance;
  tracing: Tracing;
  /** Invocations found `running` or `queued` at start and settled (uncertain or failed). */
  recovered: InvocationRecord[];
  /** Calls whose outcome storage refused, settled in the background once it takes writes. */
  pending: PendingOutcomes;
  /** This node's registration and heartbeat, and its takeover of nodes that stopped. */
  node: NodeWatch;
  /** This node's id (DESIGN §12). */
  nodeId: string;
  /** This gateway's hold on its data directory, given up last at close. */
  lock: DataDirLock;
  /** The periodic pass that denies calls whose approval expired or was rejected. */
  approvalSweep: NodeJS.Timeout;
  /** The periodic artifact retention pass; null when artifacts are kept forever. */
  retentionSweep: NodeJS.Timeout | null;
  /** Services run beside the gateway, closed after it stops taking requests. */
  companions: Companion[];
}

/**
 * The composition root: opens storage and keys, wires the parts, recovers interrupted calls,
 * reaps what a crash left, and serves the REST API. `close()` is safe to call twice.
 */
export class Gateway {
  /** `created` (wired), `open` once it listens (ready), `closing`, `closed`. */
  private readonly state = new ResourceLifecycle('the gateway', 'created');

  private constructor(private readonly parts: GatewayParts) {}

  get config(): GatewayConfig {
    return this.parts.config;
  }
  /**
   * The SQLite database (tests reach into it).
   * @throws Error when the gateway runs on PostgreSQL (see {@link storage}).
   */
  get db(): SqliteDatabase {
    const db = this.parts.storage.sqlite;
    if (!db) throw new Error('this gateway runs on PostgreSQL, not SQLite');
    return db;
  }
  /** Its stores, on SQLite or PostgreSQL. */
  get storage(): Storage {
    return this.parts.storage;
  }
  get keyring(): Keyring {
    return this.parts.keyring;
  }
  get directory(): Directory {
    return this.parts.directory;
  }
  get registry(): ToolRegistry {
    return this.parts.registry;
  }
  get policy(): TenantPolicy {
    return this.parts.policy;
  }
  get invocations(): InvocationService {
    return this.parts.invocations;
  }
  get approvals(): ApprovalService {
    return this.parts.approvals;
  }
  get uncertain(): UncertainEffects {
    return this.parts.uncertain;
  }
  get secrets(): SecretService {
    return this.parts.secrets;
  }
  get execution(): Execution {
    return this.parts.execution;
  }
  get mcp(): McpService {
    return this.parts.mcp;
  }
  get auditLog(): AuditLog {
    return this.parts.auditLog;
  }
  get server(): FastifyInstance {
    return this.parts.server;
  }
  get recovered(): InvocationRecord[] {
    return this.parts.recovered;
  }
  /** This gateway's node id among the nodes of its database. */
  get nodeId(): string {
    return this.parts.nodeId;
  }
  /** Its heartbeat and takeover of dead nodes (tests tick it). */
  get node(): NodeWatch {
    return this.parts.node;
  }

  /** Opens everything; does not listen yet. */
  static async open(config: GatewayConfig, deps: GatewayDeps = {}): Promise<Gateway> {
    const clock = deps.clock ?? systemClock;
    // Before anything touches the directory: a second gateway on it would settle the first's
    // running calls as uncertain and reap its sandboxes.
    const lock = DataDirLock.acquire(config.dataDir);
    let storage: Storage | undefined;
    let ids: IdGenerator;
    let nodeId: string;
    try {
      storage = await openStorage(config);
      // Ids only increase, above every stored one: lists stay in order after a clock step back.
      ids = deps.ids ?? monotonicIds(clock, await storage.latestId());
      nodeId = await nodeIdOf(config.dataDir);
      await checkNodeId(storage.nodes, nodeId, clock.now(), config.node.graceMs);
    } catch (err) {
      await storage?.close();
      lock.release();
      throw err;
    }
    const logger = deps.logger ?? createLogger({ level: config.logLevel });
    const tracing = await openTracing(config.tracing, VERSION);
    let execution: Execution | undefined;
    let mcpService: McpService | undefined;
    let pending: PendingOutcomes | undefined;
    let node: NodeWatch | undefined;
    let keyringOpened: Keyring | undefined;
    const companions: Companion[] = [];
    try {
      companions.push(...((await deps.companions?.(config)) ?? []));
      const cipher = await SecretCipher.load({
        keyFile: join(config.dataDir, 'keys', 'master.key'),
      });
      const keyring = await openKeyring({ config, storage, cipher, clock });
      keyringOpened = keyring;
      const store = storage.invocations;
      node = await NodeWatch.register({
        id: nodeId,
        nodes: storage.nodes,
        invocations: store,
        leases: storage.leases,
        signer: keyring,
        clock,
        config: config.node,
        log: logger,
      });
      // First settle what a crash of this node left running (and what was stored before calls
      // carried their node), so the reaper finds those leases orphaned; then take over the other
      // nodes whose heartbeat stopped.
      const recovered = await recoverInterrupted({
        store,
        signer: keyring,
        clock,
        nodes: [nodeId, null],
      });
      const takenOver = await node.startTicking();
      const artifacts = new FileArtifactStore(join(config.dataDir, 'artifacts'));
      execution = await openExecution({
        config,
        storage,
        cipher,
        clock,
        ids,
        invocations: store,
        node: nodeId,
      });
      reapTakenOverLocally(node, execution, logger, takenOver);
      const native = new NativeExecutor();
      deps.nativeHandlers?.(native);
      const broker = execution.broker;
      // HTTP upstreams go where the sandboxes may: the egress allow-list, read at each check.
      const egress = new GatewayEgress({
        allow: () => config.sandbox.egressAllow,
        source: 'GATEHOUSE_EGRESS_ALLOW',
      });
      // Its kept connections end with the gateway, like a companion's.
      companions.push({ close: () => Promise.resolve(egress.close()) });
      const mcp = new McpService({
        store: storage.mcp,
        clock,
        ids,
        checkUrl: (url) => egress.check(url),
        protectedDirs: [
          { path: config.dataDir, name: "the gateway's data directory" },
          { path: config.sandbox.root, name: 'the sandbox root (the workspaces)' },
        ],
        connectHttp: (url) => egress.connect(url),
        maxMessageBytes: config.mcp.maxMessageBytes,
        maxMessageBytesSetting: MAX_MESSAGE_BYTES_SETTING,
        // One set of leases per upstream connection, ended when the connection closes (a
        // reconnect issues fresh ones); the values never reach the server record or a log.
        issueCredentials: async (tenant, serverId, needs) => {
          const holder = `mcp-server/${serverId}/${ids.next()}`;
          try {
            const issued = await broker.issue(tenant, holder, needs, MCP_CREDENTIAL_TTL_MS);
            return {
              env: issued.env,
              headers: issued.headers,
              values: issued.values,
              release: () => broker.revoke(holder, 'upstream connection closed'),
            };
          } catch (err) {
            await broker.revoke(holder).catch(() => undefined);
            throw err;
          }
        },
        ...(execution.mcpLauncher ? { stdioLauncher: execution.mcpLauncher } : {}),
      });
      mcpService = mcp;
      const executors = new Map<string, Executor>([
        ['native', native],
        [
          'mcp',
          new McpExecutor({
            mcp,
            maxOutputBytes: config.maxOutputBytes,
            forwarding: config.mcp.forwarding,
          }),
        ],
        ['http', new HttpExecutor({ egress })],
        ...execution.executors,
      ]);
      const directory = await Directory.open({
        store: storage.tenancy,
        clock,
        ids,
        tokenTtlMs: config.tokenTtlMs,
      });
      const registry = await ToolRegistry.open({
        store: storage.tools,
        clock,
        schemas: new JsonSchemaValidator(),
        canExecute: (d) => {
          const executor = executors.get(d.kind);
          if (executor) return executor.check(d);
          return `tools of kind ${d.kind} cannot run on this gateway (available kinds: ${[...executors.keys()].join(', ')}${execution?.sandboxProblem ? `; sandboxed kinds are off: ${execution.sandboxProblem}` : ''})`;
        },
        inputCheck: (d) => executors.get(d.kind)?.inputCheck?.(d) ?? null,
      });
      const policy = new TenantPolicy({
        store: storage.policies,
        engine: new CedarEngine(),
        clock,
      });
      await policy.load();
      mcp.start();
      const capacity = execution.capacity;
      const metrics = new GatewayMetrics({ capacity: () => capacity.usage() });
      storage.onStorageError((code) => {
        metrics.storageError(code);
        logger.error({ code }, 'the database refused a write');
      });
      pending = new PendingOutcomes({ store, signer: keyring, clock });
      const pipeline = new Pipeline({
        pending,
        policy,
        executors,
        store,
        signer: keyring,
        artifacts,
        clock,
        metrics,
        tracer: tracing.tracer,
        log: logger,
        approvals: { ttlMs: config.approvalTtlMs, quorum: config.approvalQuorum, ids, clock },
        broker: execution.broker,
        ...(execution.leases ? { leases: execution.leases } : {}),
        maxOutputBytes: config.maxOutputBytes,
        maxArtifactBytes: config.maxArtifactBytes,
        defaultTimeoutMs: config.defaultTimeoutMs,
        node: nodeId,
        environmentNames: (tenant, project) =>
          directory.environmentsOf(tenant, project).map((e) => e.name),
        toolVersions: (tenant, id) => registry.versions(tenant, id),
      });
      const approvals = new ApprovalService({ store: storage.approvals, clock });
      const invocations = new InvocationService({
        pipeline,
        store,
        registry,
        directory,
        approvals,
        clock,
        ids,
      });
      const uncertain = new UncertainEffects({ store, signer: keyring, clock });
      registry.onRevoked(async ({ tenant, tool, inFlightPolicy, reason, actor }) => {
        if (inFlightPolicy !== 'abort') return;
        invocations.abortRunning(tenant, tool, reason);
        await approvals.invalidateForTool(
          tenant,
          tool,
          `${tool.id}@${tool.version} was revoked: ${reason}`,
          actor,
        );
      });
      const auditLog = new AuditLog({ store: storage.audit, signer: keyring, clock });
      const self: { gateway?: Gateway } = {};
      const sandboxProblem = execution.sandboxProblem;
      const server = buildServer({
        version: VERSION,
        logger,
        logRequests: config.logRequests,
        tracer: tracing.tracer,
        mcp: {
          listenHosts: [config.host],
          ...mcpReachOf(config.reach),
          streamLimits: config.mcp.streams,
        },
        trustedProxies: config.reach.trustedProxies,
        limits: config.limits,
        streams: config.streams,
        studio: loadStudioFiles(config.studioDir),
        ...(config.tls ? { tls: config.tls } : {}),
        services: {
          registry,
          directory,
          sessions: new SessionBook({
            clock,
            ttlMs: config.sessionTtlMs,
            watchToken: (id, listener) => directory.tokens.watch(id, listener),
          }),
          ...(storage.mcpSessions ? { mcpSessions: storage.mcpSessions } : {}),
          ...(storage.mcpStreamEvents ? { mcpStreamEvents: storage.mcpStreamEvents } : {}),
          invocations,
          approvals,
          uncertain,
          policy,
          auditLog,
          auditWriter: { clock, append: (records) => auditLog.append(records) },
          secrets: execution.secrets,
          artifacts,
          mcp,
          events: storage.outbox,
          metrics,
          // Reloaded (on PostgreSQL another node may have rotated the keys) at most once a second.
          jwks: recentJwks(keyring, 1000),
          ready: () => self.gateway?.isReady() ?? false,
          ...(config.oauth
            ? {
                oauth: {
                  resource: config.oauth.audience,
                  issuer: config.oauth.issuer,
                  verifier: new AccessTokenVerifier({
                    ...config.oauth,
                    jwksUriSetting: 'GATEHOUSE_OAUTH_JWKS_URI',
                    knownTenant: (id) => directory.tenant(id) !== undefined,
                  }),
                },
              }
            : {}),
          storage: () => storage.storageProblem(),
          sandbox: () => sandboxProblem,
          // One view per tools/list: its reads grow with the servers, not with the tools.
          healthy: (tenant) => {
            const view = mcp.view(tenant);
            return (t) => t.descriptor.kind !== 'mcp' || view.descriptorCallable(t.descriptor);
          },
        },
      });
      self.gateway = new Gateway({
        config,
        storage,
        keyring,
        directory,
        registry,
        policy,
        invocations,
        approvals,
        uncertain,
        secrets: execution.secrets,
        execution,
        mcp,
        auditLog,
        server,
        tracing,
        recovered,
        pending,
        node,
        nodeId,
        lock,
        approvalSweep: sweepApprovals(invocations, config.approvalTtlMs),
        retentionSweep: sweepArtifacts(artifacts, clock, config, logger),
        companions,
      });
      return self.gateway;
    } catch (err) {
      pending?.close();
      keyringOpened?.close();
      await mcpService?.close();
      await execution?.close();
      await node?.close();
      await closeAll(companions);
      await storage.close();
      await tracing.close();
      lock.release();
      throw err;
    }
  }

  private isReady(): boolean {
    return this.state.isOpen;
  }

  /**
   * Listens on the configured host and port; resolves with the base URL.
   * @throws IllegalStateError when it listens already, or was closed meanwhile.
   */
  async listen(): Promise<string> {
    const address = await this.server.listen({ host: this.config.host, port: this.config.port });
    this.state.to('open');
    // Fastify names the scheme from its own `https` option; TLS here comes from the server factory.
    return this.config.tls ? address.replace(/^http:/, 'https:') : address;
  }

  /**
   * Reads the TLS certificate and key files again and serves them to new connections (a renewed
   * certificate without a restart; `gatehouse serve` does this on SIGHUP). Open connections keep
   * theirs. Does nothing without TLS.
   * @throws GatehouseError INVALID_INPUT when the files cannot be read or do not make a pair; the
   *   certificate served stays the old one.
   */
  reloadTls(): void {
    const tls = this.config.tls;
    if (!tls) return;
    const fresh = readTls(tls.certFile, tls.keyFile);
    (this.server.server as unknown as TlsServer).setSecureContext({
      cert: fresh.cert,
      key: fresh.key,
    });
  }

  /**
   * Stops taking requests, aborts running calls (they end failed or uncertain), closes storage.
   * Safe to call twice: a later call waits for the first.
   */
  close(): Promise<void> {
    return this.state.close(async () => {
      clearInterval(this.parts.approvalSweep);
      if (this.parts.retentionSweep) clearInterval(this.parts.retentionSweep);
      this.invocations.abortAll();
      this.directory.tokens.close();
      await this.server.close();
      this.parts.pending.close();
      this.parts.keyring.close();
      await this.parts.mcp.close();
      await this.execution.close();
      // Its calls are settled above: deregistered, no other node takes it over.
      await this.parts.node.close();
      await closeAll(this.parts.companions);
      await this.parts.storage.close();
      // Last, so the spans of the calls aborted above are exported too.
      await this.parts.tracing.close();
      this.parts.lock.release();
    });
  }
}

/**
 * Denies, now and then periodically, the calls whose approval can no longer be used (DESIGN §3):
 * an approval that expires undecided leaves its call `denied` even if no one looks. The period is
 * a quarter of the approval lifetime, between 200 ms and 30 s.
 */
function sweepApprovals(invocations: InvocationService, ttlMs: number): NodeJS.Timeout {
  const sweep = () => void invocations.denyUnusableApprovals().catch(() => undefined);
  sweep();
  const timer = setInterval(sweep, approvalSweepPeriod(ttlMs));
  timer.unref();
  return timer;
}

/** A quarter of the approval lifetime, between 200 ms and 30 s. */
function approvalSweepPeriod(ttlMs: number): number {
  return Math.min(30_000, Math.max(200, Math.floor(ttlMs / 4)));
}

/**
 * Removes, now and then periodically, the artifacts older than the retention (whether or not the
 * sandbox runs). The retention is days long, so the pass is slow: a 24th of it, at most hourly,
 * never more often than the approval sweep. A retention of 0 keeps artifacts forever (no timer).
 */
function sweepArtifacts(
  artifacts: FileArtifactStore,
  clock: Clock,
  config: Pick<GatewayConfig, 'artifactRetentionMs' | 'approvalTtlMs'>,
  logger: Logger,
): NodeJS.Timeout | null {
  const retention = config.artifactRetentionMs;
  if (retention <= 0) return null;
  const sweep = () =>
    void artifacts
      .removeOlderThan(clock.now() - retention)
      .catch((err: unknown) => logger.warn({ err }, 'the artifact retention pass failed'));
  sweep();
  const period = Math.max(
    approvalSweepPeriod(config.approvalTtlMs),
    Math.min(3_600_000, Math.floor(retention / 24)),
  );
  const timer = setInterval(sweep, period);
  timer.unref();
  return timer;
}

/** Closes every companion, even when one fails to. */
async function closeAll(companions: Companion[]): Promise<void> {
  await Promise.allSettled(companions.map((c) => c.close()));
}
