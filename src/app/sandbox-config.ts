import { createHash } from 'node:crypto';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { ErrorCode, GatehouseError } from '../core/index.js';
import type { PoolConfig } from '../capacity/index.js';
import { EgressAllowList } from '../egress/index.js';

/** How sandboxed tools run: capacity, defaults of a lease, egress, repositories. */
export interface SandboxConfig {
  /** `off` runs no sandbox: tools that need one fail before any effect. */
  enabled: boolean;
  /**
   * Where workspaces, egress sockets and the demo repository live. The sandbox user runs
   * bubblewrap and must reach them, so this is not inside the (private) data directory; each
   * path in it must be traversable by that user. It is this gateway's alone: everything it reaps
   * (workspaces at start and on each pass) lies in it: `<instance id>` (see {@link instanceId})
   * under GATEHOUSE_SANDBOX_DIR, which gateways with other data directories may share, else
   * `gatehouse-<instance id>` under the system temp dir.
   */
  root: string;
  /** GATEHOUSE_SANDBOX_DIR, the directory `root` is in when one was given; it is made 0711. */
  sharedDir?: string;
  pool: PoolConfig;
  /**
   * The pool stdio MCP servers' leases come from (one per connection, held while it lives), apart
   * from the tools' pool so long-lived upstreams never starve calls. Default {@link MCP_POOL}.
   */
  mcpPool?: PoolConfig;
  /** What a lease gets when its descriptor says nothing. */
  defaults: { cpus: number; memoryMb: number; pids: number };
  /** How long a call may wait for capacity before CAPACITY_EXHAUSTED. */
  queueBudgetMs: number;
  /** How long an attempt's shared lease (and worktree) lives after its last call. */
  attemptTtlMs: number;
  /** Most MiB a lease's workspace may hold (a tmpfs of that size); 0 = unbounded. */
  workspaceMb: number;
  /** Most idle attempt leases an agent keeps; past it the least recently used are ended. */
  idleAttemptsPerAgent: number;
  /** Hosts sandboxes may reach through the egress proxy, unless a descriptor lists its own. */
  egressAllow: string[];
  /** Repositories worktrees are made from, by name. */
  repositories: Record<string, string>;
  /** How often the reaper runs. */
  reapIntervalMs: number;
  /**
   * The warm pool (GATEHOUSE_SANDBOX_WARM): sandboxes started ahead of their calls, each used by
   * one call; size 0 (the default) keeps none.
   */
  warm: { size: number; refill: number; memoryMb: number; egress: boolean };
}

/** The default pool of stdio MCP servers: up to 16 connections, 256 MiB and a quarter core each. */
export const MCP_POOL: PoolConfig = {
  name: 'mcp-upstreams',
  cpus: 4,
  memoryBytes: 16 * 256 * 1024 * 1024,
  gpus: 0,
  leases: 16,
};

/**
 * A gateway's instance id: the first 12 hex digits of the SHA-256 of its data directory's absolute
 * path. It names the gateway's own directory in a sandbox directory, so gateways with different
 * data directories never share (or reap) each other's workspaces, and a restarted one finds its
 * own. Short: egress socket paths in it must stay under 108 bytes.
 */
export function instanceId(dataDir: string): string {
  return createHash('sha256').update(resolve(dataDir)).digest('hex').slice(0, 12);
}

/** The sandbox configuration from `GATEHOUSE_*` variables and defaults. */
export function loadSandboxConfig(env: NodeJS.ProcessEnv, dataDir: string): SandboxConfig {
  const pool = keyValues(env.GATEHOUSE_POOL, 'GATEHOUSE_POOL');
  const quotas = keyValues(env.GATEHOUSE_LEASE_QUOTAS, 'GATEHOUSE_LEASE_QUOTAS');
  for (const key of Object.keys(quotas))
    if (!['tenant', 'agent', 'idleAttempts'].includes(key))
      throw new GatehouseError(
        ErrorCode.INVALID_INPUT,
        `GATEHOUSE_LEASE_QUOTAS: unknown key ${JSON.stringify(key)}; the keys are tenant, agent and idleAttempts.`,
      );
  return {
    enabled: env.GATEHOUSE_SANDBOX !== 'off',
    root:
      env.GATEHOUSE_SANDBOX_DIR === undefined
        ? join(tmpdir(), `gatehouse-${instanceId(dataDir)}`)
        : join(env.GATEHOUSE_SANDBOX_DIR, instanceId(dataDir)),
    ...(env.GATEHOUSE_SANDBOX_DIR === undefined ? {} : { sharedDir: env.GATEHOUSE_SANDBOX_DIR }),
    pool: {
      name: 'default',
      cpus: num(pool.cpus, 'GATEHOUSE_POOL cpus') ?? 2,
      memoryBytes: (num(pool.memoryMb, 'GATEHOUSE_POOL memoryMb') ?? 4096) * 1024 * 1024,
      gpus: num(pool.gpus, 'GATEHOUSE_POOL gpus') ?? 0,
      leases: num(pool.leases, 'GATEHOUSE_POOL leases') ?? 8,
      quotas: {
        tenantLeases: num(quotas.tenant, 'GATEHOUSE_LEASE_QUOTAS tenant') ?? 4,
        agentLeases: num(quotas.agent, 'GATEHOUSE_LEASE_QUOTAS agent') ?? 2,
      },
    },
    defaults: { cpus: 1, memoryMb: 512, pids: 128 },
    queueBudgetMs: num(env.GATEHOUSE_QUEUE_BUDGET_MS, 'GATEHOUSE_QUEUE_BUDGET_MS') ?? 10_000,
    attemptTtlMs: num(env.GATEHOUSE_ATTEMPT_TTL_MS, 'GATEHOUSE_ATTEMPT_TTL_MS') ?? 30 * 60_000,
    workspaceMb: num(env.GATEHOUSE_WORKSPACE_MB, 'GATEHOUSE_WORKSPACE_MB') ?? 1024,
    idleAttemptsPerAgent: num(quotas.idleAttempts, 'GATEHOUSE_LEASE_QUOTAS idleAttempts') ?? 1,
    egressAllow: egressAllow(env.GATEHOUSE_EGRESS_ALLOW),
    repositories: keyValues(env.GATEHOUSE_REPOSITORIES, 'GATEHOUSE_REPOSITORIES'),
    reapIntervalMs: num(env.GATEHOUSE_REAP_INTERVAL_MS, 'GATEHOUSE_REAP_INTERVAL_MS') ?? 30_000,
    warm: warmPool(env.GATEHOUSE_SANDBOX_WARM),
  };
}

/** Most warm sandboxes a gateway may keep: each holds a few processes and up to its memoryMb. */
const MAX_WARM = 64;

/** `size=4,refill=2,memoryMb=512,egress=on` (every key optional; size 0 = no pool). */
function warmPool(value: string | undefined): SandboxConfig['warm'] {
  const name = 'GATEHOUSE_SANDBOX_WARM';
  const kv = keyValues(value, name);
  for (const key of Object.keys(kv))
    if (!['size', 'refill', 'memoryMb', 'egress'].includes(key))
      throw new GatehouseError(
        ErrorCode.INVALID_INPUT,
        `${name}: unknown key ${JSON.stringify(key)}; the keys are size, refill, memoryMb and egress.`,
      );
  const size = num(kv.size, `${name} size`) ?? 0;
  if (!Number.isInteger(size) || size > MAX_WARM)
    throw new GatehouseError(
      ErrorCode.INVALID_INPUT,
      `${name} size must be a whole number from 0 to ${MAX_WARM}; got ${JSON.stringify(kv.size)}.`,
    );
  const refill = num(kv.refill, `${name} refill`) ?? 1;
  if (!Number.isInteger(refill) || refill < 1)
    throw new GatehouseError(
      ErrorCode.INVALID_INPUT,
      `${name} refill must be a whole number of at least 1; got ${JSON.stringify(kv.refill)}.`,
    );
  const memoryMb = num(kv.memoryMb, `${name} memoryMb`) ?? 512;
  if (memoryMb < 16)
    throw new GatehouseError(
      ErrorCode.INVALID_INPUT,
      `${name} memoryMb must be at least 16; got ${JSON.stringify(kv.memoryMb)}.`,
    );
  const egress = kv.egress ?? 'on';
  if (egress !== 'on' && egress !== 'off')
    throw new GatehouseError(
      ErrorCode.INVALID_INPUT,
      `${name} egress must be on or off; got ${JSON.stringify(egress)}.`,
    );
  return { size, refill, memoryMb, egress: egress === 'on' };
}

/** The allow-list's entries, each checked now, so a bad one stops the start instead of a call. */
function egressAllow(value: string | undefined): string[] {
  const entries = (value ?? 'github.com,dev.azure.com,api.nuget.org')
    .split(',')
    .map((h) => h.trim())
    .filter((h) => h !== '');
  try {
    EgressAllowList.parse(entries);
  } catch (err) {
    throw new GatehouseError(
      ErrorCode.INVALID_INPUT,
      `GATEHOUSE_EGRESS_ALLOW: ${(err as Error).message}.`,
      { cause: err },
    );
  }
  return entries;
}

/** `a=1,b=2` as a map. */
function keyValues(value: string | undefined, name: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const part of (value ?? '').split(',').filter((p) => p.trim() !== '')) {
    const at = part.indexOf('=');
    if (at <= 0)
      throw new GatehouseError(
        ErrorCode.INVALID_INPUT,
        `${name} must look like key=value,key=value; got ${JSON.stringify(value)}.`,
      );
    out[part.slice(0, at).trim()] = part.slice(at + 1).trim();
  }
  return out;
}

function num(value: string | undefined, name: string): number | undefined {
  if (value === undefined || value === '') return undefined;
  const n = Number(value);
  if (!Number.isFinite(n) || n < 0)
    throw new GatehouseError(
      ErrorCode.INVALID_INPUT,
      `${name} must be a non-negative number; got ${JSON.stringify(value)}.`,
    );
  return n;
}
