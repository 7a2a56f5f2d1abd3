import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ErrorCode, GatehouseError, isEnvironmentClass } from '../core/index.js';
import type { EnvironmentClass } from '../core/index.js';
import type { ServerLimits, StreamLimits } from '../http/index.js';
import { loadServerLimits, loadStreamLimits } from './http-config.js';
import { DEFAULT_TOKEN_TTL_MS, MAX_TOKEN_TTL_MS, parseDuration } from '../tenancy/index.js';
import { loadSandboxConfig } from './sandbox-config.js';
import type { SandboxConfig } from './sandbox-config.js';
import { LOG_LEVELS, isLogLevel } from './logger.js';
import type { LogLevel } from './logger.js';
import { envInteger } from './env-integer.js';
import { loadReachConfig } from './reach-config.js';
import type { ReachConfig, ReachFlags } from './reach-config.js';
import { loadOAuthConfig } from './oauth-config.js';
import type { OAuthConfig } from './oauth-config.js';
import { loadTlsConfig } from './tls-config.js';
import type { TlsConfig, TlsFlags } from './tls-config.js';
import { loadTracingConfig } from './tracing-config.js';
import { loadNodeConfig } from './node-config.js';
import type { NodeConfig } from './node-config.js';
import type { TracingConfig } from './tracing-config.js';
import { loadMcpConfig } from './mcp-config.js';
import type { McpConfig, McpForwardingConfig } from './mcp-config.js';
import type { McpStreamLimits } from '../tenancy/index.js';

/** Everything the gateway is configured with. */
export interface GatewayConfig {
  /** Directory for the SQLite file, signing keys, artifacts and demo tokens. */
  dataDir: string;
  host: string;
  port: number;
  /** `postgres://…` (PostgreSQL), `sqlite:PATH` or a path; default DATA/gatehouse.db. */
  db?: string;
  /** Most PostgreSQL connections this node holds (`GATEHOUSE_DB_POOL`, default 10). */
  dbPoolSize?: number;
  /** Heartbeat interval and grace period of this node among the nodes of the database. */
  node: NodeConfig;
  /** Output beyond this many bytes is cut and kept whole as an artifact. */
  maxOutputBytes: number;
  /** Most bytes of each output stream of a call kept in its artifact; a flood past it is cut. */
  maxArtifactBytes: number;
  /** How long artifacts are kept; older ones are removed by the reaper. 0 keeps them forever. */
  artifactRetentionMs: number;
  /** Execute-stage timeout for descriptors that set none. */
  defaultTimeoutMs: number;
  /** `full` fsyncs each group commit; `normal` survives process crashes only. */
  synchronous: 'full' | 'normal';
  /** How long an approval request stays valid. */
  approvalTtlMs: number;
  /** Approvals needed per environment class. */
  approvalQuorum: Record<EnvironmentClass, number>;
  /** How long a new bearer token lives when its maker does not say (default 90 days). */
  tokenTtlMs: number;
  /** Sandboxes, capacity, egress, repositories. */
  sandbox: SandboxConfig;
  demo: boolean;
  /** Also log a line per HTTP request as it arrives and as it is answered. */
  logRequests: boolean;
  /** Request, header and keep-alive timeouts, connection and JSON bounds. */
  limits: ServerLimits;
  /** Caps and buffer bounds of `/v1/events/stream`. */
  streams: StreamLimits;
  /** The public URL, the hosts and origins `/mcp` accepts, the trusted reverse proxies. */
  reach: ReachConfig;
  /** Bounds of forwarded sampling and elicitation, and of `/mcp` streams kept for replay. */
  mcp: McpConfig;
  /** The built Studio served at `/studio` (`npm run build` writes `dist/studio/`). */
  studioDir: string;
  /** How long a Studio sign-in lasts. */
  sessionTtlMs: number;
  /** The least severe level logged (JSON lines on standard error); `silent` logs nothing. */
  logLevel: LogLevel;
  /** Span export, from the standard `OTEL_*` variables; null when tracing is off. */
  tracing: TracingConfig | null;
  /** OAuth access tokens accepted (`GATEHOUSE_OAUTH_*`); null: Gatehouse tokens only. */
  oauth: OAuthConfig | null;
  /** The certificate and key served directly (`GATEHOUSE_TLS_*`); null: plain HTTP. */
  tls: TlsConfig | null;
}

/** What a caller (`gatehouse serve`, a test) sets over the environment and the defaults. */
export type ConfigFlags = Partial<
  Omit<GatewayConfig, 'limits' | 'streams' | 'reach' | 'tls' | 'node' | 'mcp'>
> & {
  mcp?: {
    forwarding?: Partial<McpForwardingConfig>;
    streams?: Partial<McpStreamLimits>;
    maxMessageBytes?: number;
  };
  limits?: Partial<ServerLimits>;
  node?: Partial<NodeConfig>;
  streams?: Partial<StreamLimits>;
  reach?: ReachFlags;
  tls?: TlsFlags;
};

/** Where `npm run build` puts the Studio: `dist/studio/` at the repository's root. */
const BUILT_STUDIO = fileURLToPath(new URL('../../dist/studio/', import.meta.url));

/** The configuration from flags, then `GATEHOUSE_*` environment variables, then defaults. */
export function loadConfig(
  flags: ConfigFlags,
  env: NodeJS.ProcessEnv = process.env,
): GatewayConfig {
  const dataDir = resolve(flags.dataDir ?? env.GATEHOUSE_DATA ?? '.data');
  const reach = loadReachConfig(flags.reach ?? {}, env);
  const config: GatewayConfig = {
    dataDir,
    host: flags.host ?? env.GATEHOUSE_HOST ?? '127.0.0.1',
    port: flags.port ?? envInteger(env.GATEHOUSE_PORT, 'GATEHOUSE_PORT') ?? 7070,
    maxOutputBytes:
      flags.maxOutputBytes ??
      envInteger(env.GATEHOUSE_MAX_OUTPUT_BYTES, 'GATEHOUSE_MAX_OUTPUT_BYTES') ??
      64 * 1024,
    maxArtifactBytes:
      flags.maxArtifactBytes ??
      envInteger(env.GATEHOUSE_MAX_ARTIFACT_BYTES, 'GATEHOUSE_MAX_ARTIFACT_BYTES') ??
      16 * 1024 * 1024,
    artifactRetentionMs:
      flags.artifactRetentionMs ??
      envInteger(env.GATEHOUSE_ARTIFACT_RETENTION_MS, 'GATEHOUSE_ARTIFACT_RETENTION_MS') ??
      30 * 24 * 3600 * 1000,
    defaultTimeoutMs:
      flags.defaultTimeoutMs ??
      envInteger(env.GATEHOUSE_TIMEOUT_MS, 'GATEHOUSE_TIMEOUT_MS') ??
      30_000,
    synchronous: flags.synchronous ?? sync(env.GATEHOUSE_SYNCHRONOUS) ?? 'full',
    approvalTtlMs:
      flags.approvalTtlMs ??
      envInteger(env.GATEHOUSE_APPROVAL_TTL_MS, 'GATEHOUSE_APPROVAL_TTL_MS') ??
      24 * 3600 * 1000,
    approvalQuorum: flags.approvalQuorum ?? quorum(env.GATEHOUSE_APPROVAL_QUORUM),
    tokenTtlMs: flags.tokenTtlMs ?? tokenTtl(env.GATEHOUSE_TOKEN_TTL),
    sandbox: flags.sandbox ?? loadSandboxConfig(env, dataDir),
    demo: flags.demo ?? false,
    logRequests: flags.logRequests ?? env.GATEHOUSE_LOG_REQUESTS === '1',
    limits: loadServerLimits(flags.limits ?? {}, env),
    streams: loadStreamLimits(flags.streams ?? {}, env),
    reach,
    mcp: loadMcpConfig(flags.mcp ?? {}, env),
    studioDir: resolve(flags.studioDir ?? env.GATEHOUSE_STUDIO_DIR ?? BUILT_STUDIO),
    sessionTtlMs:
      flags.sessionTtlMs ??
      envInteger(env.GATEHOUSE_SESSION_TTL_MS, 'GATEHOUSE_SESSION_TTL_MS') ??
      8 * 3600 * 1000,
    logLevel: flags.logLevel ?? logLevel(env.GATEHOUSE_LOG_LEVEL),
    tracing: flags.tracing !== undefined ? flags.tracing : loadTracingConfig(env),
    oauth: flags.oauth !== undefined ? flags.oauth : loadOAuthConfig(env, reach),
    tls: loadTlsConfig(flags.tls ?? {}, env),
    node: loadNodeConfig(flags.node ?? {}, env),
  };
  const db = flags.db ?? env.GATEHOUSE_DB;
  if (db !== undefined) config.db = db;
  const pool = flags.dbPoolSize ?? envInteger(env.GATEHOUSE_DB_POOL, 'GATEHOUSE_DB_POOL');
  if (pool !== undefined) {
    if (pool < 1 || pool > 1000) {
      throw new GatehouseError(
        ErrorCode.INVALID_INPUT,
        `GATEHOUSE_DB_POOL must be an integer in 1–1000; got ${pool}.`,
      );
    }
    config.dbPoolSize = pool;
  }
  if (!Number.isInteger(config.port) || config.port < 0 || config.port > 65535) {
    throw new GatehouseError(
      ErrorCode.INVALID_INPUT,
      `port must be an integer in 0–65535; got ${config.port}.`,
    );
  }
  return config;
}

/** `production=2,staging=1`: approvals needed per environment class; 1 where unnamed. */
function quorum(value: string | undefined): Record<EnvironmentClass, number> {
  const q: Record<EnvironmentClass, number> = { development: 1, staging: 1, production: 1 };
  for (const part of (value ?? '').split(',').filter((p) => p.trim() !== '')) {
    const [cls, n] = part.split('=').map((x) => x.trim());
    if (!isEnvironmentClass(cls) || n === undefined || !/^[1-9]\d*$/.test(n)) {
      throw new GatehouseError(
        ErrorCode.INVALID_INPUT,
        `GATEHOUSE_APPROVAL_QUORUM must look like production=2,staging=1 (classes development, staging, production; counts ≥ 1); got ${JSON.stringify(value)}.`,
      );
    }
    q[cls] = Number(n);
  }
  return q;
}

function logLevel(value: string | undefined): LogLevel {
  if (value === undefined || value === '') return 'info';
  if (!isLogLevel(value))
    throw new GatehouseError(
      ErrorCode.INVALID_INPUT,
      `GATEHOUSE_LOG_LEVEL must be one of ${LOG_LEVELS.join(', ')}; got ${JSON.stringify(value)}.`,
    );
  return value;
}

/** `GATEHOUSE_TOKEN_TTL`: a duration (`90d`, `12h`) up to 366 days. */
function tokenTtl(value: string | undefined): number {
  if (value === undefined || value === '') return DEFAULT_TOKEN_TTL_MS;
  const ms = parseDuration(value, 'GATEHOUSE_TOKEN_TTL');
  if (ms > MAX_TOKEN_TTL_MS)
    throw new GatehouseError(
      ErrorCode.INVALID_INPUT,
      `GATEHOUSE_TOKEN_TTL must be at most 366d; got ${JSON.stringify(value)}.`,
    );
  return ms;
}

function sync(value: string | undefined): 'full' | 'normal' | undefined {
  if (value === undefined || value === '') return undefined;
  if (value !== 'full' && value !== 'normal')
    throw new GatehouseError(
      ErrorCode.INVALID_INPUT,
      `GATEHOUSE_SYNCHRONOUS must be full or normal; got ${JSON.stringify(value)}.`,
    );
  return value;
}
