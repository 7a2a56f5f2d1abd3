import type { OutboxFeed } from '../core/index.js';
import type { AuditLog, JwkSet } from '../audit/index.js';
import type { ApprovalService } from '../approvals/index.js';
import type { AuditWriter, McpService } from '../mcp/index.js';
import type { InvocationService, UncertainEffects } from '../invocation/index.js';
import type { TenantPolicy } from '../policy/index.js';
import type { SecretService } from '../secrets/index.js';
import type {
  Directory,
  McpSessionStore,
  McpStreamEventStore,
  SessionBook,
} from '../tenancy/index.js';
import type { StoredDescriptor, ToolRegistry } from '../tools/index.js';
import type { AccessTokenVerifier } from '../oauth/index.js';
import type { GatewayMetrics } from './gateway-metrics.js';

/** This gateway as an OAuth 2.1 protected resource (RFC 9728), when an issuer is configured. */
export interface OAuthResource {
  /** This gateway's resource identifier: the audience its tokens must name. */
  resource: string;
  /** The authorization server's issuer identifier. */
  issuer: string;
  verifier: Pick<AccessTokenVerifier, 'verify'>;
}

/** The parts the REST API translates to. */
export interface GatewayServices {
  registry: ToolRegistry;
  directory: Directory;
  /** The Studio's sign-in sessions. */
  sessions: SessionBook;
  /** The agents' MCP sessions shared by the nodes of one database; absent: in memory only. */
  mcpSessions?: McpSessionStore;
  /** The events of those sessions' streams, kept for replay; absent: in memory only. */
  mcpStreamEvents?: McpStreamEventStore;
  invocations: InvocationService;
  approvals: ApprovalService;
  uncertain: UncertainEffects;
  policy: TenantPolicy;
  /** Secret administration; the secret routes are served only when it is set. */
  secrets?: SecretService;
  auditLog: AuditLog;
  /** The outbox, for the event stream. */
  events: OutboxFeed;
  /** The published receipt keys. */
  jwks: () => JwkSet | Promise<JwkSet>;
  metrics: GatewayMetrics;
  /** Null when sandboxed tools can run, else why not (shown by /readyz). */
  sandbox: () => string | null;
  /**
   * The artifact store, read for the screenshots a browser tool took (the MCP endpoint answers
   * them as image content); absent in tests that do not need it.
   */
  artifacts?: { get(sha256: string): Promise<Buffer | undefined> };
  /** Upstream MCP servers; absent in tests that do not need them. */
  mcp?: McpService;
  /**
   * Where the MCP endpoint records its refusals and each resource read and prompt got from an
   * upstream (and each refused): a read that cannot be recorded is not passed through.
   */
  auditWriter: AuditWriter;
  /** False while starting or stopping. */
  ready: () => boolean;
  /** OAuth access tokens (JWTs) accepted besides Gatehouse tokens; absent: static tokens only. */
  oauth?: OAuthResource;
  /** Null while storage accepts writes, else why not (/readyz then answers 503). */
  storage?: () => string | null;
  /**
   * Whether a tool can be offered to agents now (the MCP endpoint lists only healthy tools);
   * absent means every tool is healthy. Called once per `tools/list` with the agent's tenant; the
   * function it returns is asked about each tool of the list, and may read what it needs once for
   * all of them. For `mcp` tools the gateway answers from the upstream's stored state (server
   * active, tool bound with the approved digest), opening no connection.
   */
  healthy?: (tenant: string) => (tool: StoredDescriptor) => boolean | Promise<boolean>;
}
