import { chmod, mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import type { Clock, IdGenerator } from '../core/index.js';
import { ExecutionCapacity, Reaper } from '../capacity/index.js';
import { BrowserExecutor, ComputerUseExecutor, ShellExecutor } from '../executors/index.js';
import { SandboxLeases } from '../invocation/index.js';
import type { Executor, InvocationStore } from '../invocation/index.js';
import { EgressProxy } from '../egress/index.js';
import { BwrapSandbox, SANDBOX_UID, Workspaces, openScratch } from '../sandbox/index.js';
import type { ScratchDir, WarmPool } from '../sandbox/index.js';
import { CredentialBroker, SecretService } from '../secrets/index.js';
import type { SecretCipher } from '../secrets/index.js';
import type { StdioLauncher } from '../mcp/index.js';
import type { GatewayConfig } from './config.js';
import type { Storage } from './open-storage.js';
import { McpSandbox } from './mcp-sandbox.js';
import { MCP_POOL } from './sandbox-config.js';

/** Size of each scratch tmpfs: launchers, Chromium policies, sockets (a few KiB each). */
const SCRATCH_BYTES = 8 * 1024 * 1024;

/** The parts that run code for tools: secrets, capacity, sandbox, egress, workspaces, reaper. */
export interface Execution {
  secrets: SecretService;
  broker: CredentialBroker;
  /** Absent when the sandbox is off or this machine cannot run one (`sandboxProblem` says why). */
  leases?: SandboxLeases;
  sandboxProblem: string | null;
  /** The warm sandbox pool, when GATEHOUSE_SANDBOX_WARM keeps one (for /readyz-like views and the bench). */
  warmPool?: WarmPool;
  capacity: ExecutionCapacity;
  reaper?: Reaper;
  /** Executors by kind, beyond the native one. */
  executors: Map<string, Executor>;
  /**
   * Runs stdio MCP servers in sandbox leases; absent when the sandbox is (then they run directly).
   */
  mcpLauncher?: (server: { tenant: string; id: string }) => StdioLauncher;
  /** Leases reaped at start (orphans of a crash). */
  reapedAtStart: string[];
  /**
   * Kills what leases `ids` of another gateway of this host (a dead node this one took over) still
   * run, and removes their cgroups and bounded workspaces; returns the ids it found anything of.
   */
  reapLeftByOthers(ids: readonly string[]): Promise<string[]>;
  close(): Promise<void>;
}

/**
 * Opens the execution side of the gateway. The sandbox is started only if this machine can run
 * it; otherwise sandboxed tools fail before any effect and `/readyz` says why.
 */
export async function openExecution(options: {
  config: GatewayConfig;
  storage: Pick<Storage, 'secrets' | 'leases'>;
  clock: Clock;
  ids: IdGenerator;
  invocations: InvocationStore;
  /** This gateway's node id, which its leases carry. */
  node?: string;
  /** The secrets' cipher under the master key. */
  cipher: SecretCipher;
}): Promise<Execution> {
  const { config, storage, clock, ids, cipher } = options;
  const secretStore = storage.secrets;
  const secrets = new SecretService({ store: secretStore, cipher, clock });
  const broker = new CredentialBroker({ store: secretStore, cipher, clock, ids });
  const sc = config.sandbox;
  const mcpPool = sc.mcpPool ?? MCP_POOL;
  const capacity = await ExecutionCapacity.open({
    store: storage.leases,
    clock,
    ids,
    pools: [sc.pool, mcpPool],
    ...(options.node !== undefined ? { node: options.node } : {}),
  });
  // Shell and browser descriptors validate everywhere; without a sandbox their calls fail before any effect.
  const executors = new Map<string, Executor>([
    ['shell', new ShellExecutor()],
    ['browser', new BrowserExecutor()],
    ['computer-use', new ComputerUseExecutor()],
  ]);
  const base = {
    secrets,
    broker,
    capacity,
    executors,
    reapLeftByOthers: () => Promise.resolve([]),
  };
  if (!sc.enabled)
    return {
      ...base,
      sandboxProblem: 'the sandbox is turned off (GATEHOUSE_SANDBOX=off)',
      reapedAtStart: [],
      close: () => Promise.resolve(),
    };
  // The sandbox user runs bubblewrap and must pass through this root to its workspace and socket.
  await mkdir(sc.root, { recursive: true, mode: 0o711 });
  await chmod(sc.root, 0o711);
  if (sc.sharedDir !== undefined) await chmod(sc.sharedDir, 0o711);
  const asRoot = process.getuid?.() === 0;
  const scratches: ScratchDir[] = [];
  // The warm pool's relay sockets (and, unbounded, workspaces) lie on a scratch tmpfs of its own
  // when root, so a warm sandbox's mount table shows no host path, as a cold one's does. As root
  // it needs bounded workspaces: an unbounded one would be a directory on that small tmpfs.
  const warm = sc.warm;
  const warmOn = warm.size > 0 && (!asRoot || sc.workspaceMb > 0);
  const warmScratch = warmOn
    ? await openScratch(join(sc.root, 'warm'), {
        tmpfs: asRoot,
        source: 'gatehouse-warm',
        sizeBytes: SCRATCH_BYTES,
      })
    : null;
  if (warmScratch !== null) scratches.push(warmScratch);
  const sandbox = await BwrapSandbox.start({
    stateDir: join(config.dataDir, 'sandbox'),
    ...(warmScratch !== null
      ? {
          warmPool: {
            size: warm.size,
            refill: warm.refill,
            memoryBytes: warm.memoryMb * 1024 * 1024,
            egress: warm.egress,
            workspaceBytes: sc.workspaceMb * 1024 * 1024,
            dir: warmScratch.path,
          },
        }
      : {}),
  });
  const problem = await sandbox.check();
  if (problem !== null) {
    await sandbox.close();
    await warmScratch?.close();
    return { ...base, sandboxProblem: problem, reapedAtStart: [], close: () => Promise.resolve() };
  }
  const workspaces = new Workspaces({
    root: join(sc.root, 'workspaces'),
    repositories: sc.repositories,
    maxBytes: sc.workspaceMb * 1024 * 1024,
    unboundSetting: 'GATEHOUSE_WORKSPACE_MB=0',
    hostCommand: sandbox.hostCommand,
  });
  const egress = new EgressProxy({
    dir: join(sc.root, 'egress'),
    socketOwner: { uid: SANDBOX_UID, gid: SANDBOX_UID },
    // A sandbox reads the source of its socket's bind in /proc/self/mountinfo: not the host's path.
    mountTmpfs: asRoot,
  });
  const leases = new SandboxLeases({
    capacity,
    workspaces,
    egress,
    defaults: {
      pool: sc.pool.name,
      resources: {
        cpus: sc.defaults.cpus,
        memoryBytes: sc.defaults.memoryMb * 1024 * 1024,
        gpus: 0,
        pids: sc.defaults.pids,
      },
      egressAllow: sc.egressAllow,
      queueBudgetMs: sc.queueBudgetMs,
      attemptTtlMs: sc.attemptTtlMs,
      idleAttemptsPerAgent: sc.idleAttemptsPerAgent,
    },
  });
  executors.set('shell', new ShellExecutor(sandbox));
  // Browser calls' launchers and Chromium policies, warm browsers' and desktops' egress relay
  // sockets: this gateway's alone (what a crash left goes), each on a tmpfs of its own when root,
  // so a sandbox that binds a policy or a socket from them reads no host path in its mount table.
  const browserScratch = await openScratch(join(sc.root, 'browser'), {
    tmpfs: asRoot,
    source: 'gatehouse-browser',
    sizeBytes: SCRATCH_BYTES,
  });
  scratches.push(browserScratch);
  const sandboxUser = asRoot ? { uid: SANDBOX_UID, gid: SANDBOX_UID } : null;
  const browser = new BrowserExecutor(sandbox, browserScratch.path, sandboxUser);
  executors.set('browser', browser);
  // A browser kept warm for an attempt lives as long as its lease, as a desktop does.
  capacity.onEnd((lease) => browser.endLease(lease.id));
  const desktopScratch = await openScratch(join(sc.root, 'desktop'), {
    tmpfs: asRoot,
    source: 'gatehouse-desktop',
    sizeBytes: SCRATCH_BYTES,
  });
  scratches.push(desktopScratch);
  const computerUse = new ComputerUseExecutor(sandbox, {
    scratch: desktopScratch.path,
    owner: sandboxUser,
  });
  // A desktop lives as long as its lease: released or reaped, its display and application go.
  executors.set('computer-use', computerUse);
  capacity.onEnd((lease) => computerUse.endLease(lease.id));
  const mcpSandbox = new McpSandbox({
    sandbox,
    capacity,
    workspaces,
    pool: mcpPool.name,
    resources: {
      cpus: mcpPool.cpus / mcpPool.leases,
      memoryBytes: Math.floor(mcpPool.memoryBytes / mcpPool.leases),
      gpus: 0,
      pids: sc.defaults.pids,
    },
    queueBudgetMs: sc.queueBudgetMs,
  });
  const reaper = new Reaper({
    capacity,
    clock,
    inUse: (lease) => leases.holds(lease.id) || mcpSandbox.holds(lease),
    holderDone: async (lease) => {
      // An upstream's lease not held by a live connection (a crash left it) is done.
      if (lease.holder.startsWith('mcp/')) return true;
      if (!lease.holder.startsWith('invocation/')) return false;
      const record = await options.invocations.get(
        lease.tenant,
        lease.holder.slice('invocation/'.length),
      );
      return !record || (record.status !== 'running' && record.status !== 'queued');
    },
    workspaces: () => workspaces.existing(),
    removeWorkspace: (id) => workspaces.remove(id),
    onPass: () => broker.revokeExpired(),
    intervalMs: sc.reapIntervalMs,
  });
  // At start nothing runs: every gatehouse cgroup left behind is an orphan of a crash.
  const orphans = await sandbox.reapOrphans();
  const reaped = await reaper.start();
  return {
    ...base,
    leases,
    sandboxProblem: null,
    ...(sandbox.warm === null ? {} : { warmPool: sandbox.warm }),
    mcpLauncher: (server) => mcpSandbox.launcher(server),
    reaper,
    reapedAtStart: [...new Set([...orphans, ...reaped])],
    reapLeftByOthers: async (ids) => [
      ...new Set([
        ...(await sandbox.reapLeftByOthers(ids)),
        ...(await workspaces.removeLeftByOthers(ids)),
      ]),
    ],
    close: async () => {
      reaper.close();
      await computerUse.close();
      await browser.close();
      // After the desktops and browsers that use their workspaces have ended.
      await leases.close();
      await egress.close();
      await sandbox.close();
      for (const scratch of scratches) await scratch.close();
    },
  };
}
