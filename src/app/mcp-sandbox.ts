import { closeSync, existsSync, openSync, statSync } from 'node:fs';
import { dirname } from 'node:path';
import type { ExecutionCapacity, Lease, LeaseRequest, LeaseResources } from '../capacity/index.js';
import type { LaunchedStdio, StdioLauncher } from '../mcp/index.js';
import type { BwrapSandbox, ConfinedCommand, Workspaces } from '../sandbox/index.js';

/** How long an upstream's lease lives unheld; while its connection lives the reaper skips it. */
const LEASE_TTL_MS = 24 * 60 * 60 * 1000;

/** Host directories the sandbox already shows read-only (bubblewrap's system binds). */
const SYSTEM = ['/usr', '/bin', '/sbin', '/lib', '/lib32', '/lib64', '/libx32', '/etc'];

/**
 * Runs stdio MCP servers inside sandbox leases (DESIGN §4/§5): each connection holds a lease of
 * the pool (holder `mcp/<serverId>`) with a fresh workspace, and its process is bubblewrap with
 * the same flags as a tool run (user, pid, mount and network namespaces, no network at all, the
 * seccomp filter on descriptor 3, `nobody` inside), spawned as the sandbox user, in a cgroup of
 * its own with the lease's share of the pool (memory, CPU, pids). What of the host its command
 * names is mounted read-only; the directories its registration declares writable, read-write.
 * The lease, the cgroup (and
 * anything left in it) and the workspace go when the connection closes.
 */
export class McpSandbox {
  private readonly held = new Set<string>();
  /**
   * Connections being granted a lease, per tenant and holder: a granted lease counts (and the
   * reaper sees it) a turn of the event loop before it is stored and handed to its connection.
   */
  private readonly granting = new Map<string, number>();

  constructor(
    private readonly options: {
      sandbox: BwrapSandbox;
      capacity: ExecutionCapacity;
      workspaces: Workspaces;
      pool: string;
      resources: LeaseResources;
      queueBudgetMs: number;
    },
  ) {}

  /**
   * True while a connection holds the lease, or a connection of its server is being granted one
   * (it may be this one): the reaper leaves it alone.
   */
  holds(lease: Lease): boolean {
    return this.held.has(lease.id) || this.granting.has(grantKey(lease));
  }

  /** A launcher for one server's connections. */
  launcher(server: { tenant: string; id: string }): StdioLauncher {
    return async (transport, env) => {
      const argv = [transport.command, ...transport.args];
      const readOnlyMounts = mountsFor(argv);
      const lease = await this.grant({
        tenant: server.tenant,
        pool: this.options.pool,
        holder: `mcp/${server.id}`,
        agent: null,
        resources: this.options.resources,
        timeoutMs: LEASE_TTL_MS,
        readOnlyMounts,
        egressAllow: [],
        credentials: [],
        worktree: null,
        ttlMs: LEASE_TTL_MS,
      });
      let fd: number | null = null;
      const closeFd = (): void => {
        if (fd !== null) closeSync(fd);
        fd = null;
      };
      let released = false;
      let confined: ConfinedCommand | null = null;
      const release = async (): Promise<void> => {
        closeFd();
        if (released) return;
        released = true;
        await confined?.release().catch(() => undefined);
        await this.options.workspaces.remove(lease.id, 'plain').catch(() => undefined);
        await this.options.capacity.release(lease, 'the upstream connection closed');
        this.held.delete(lease.id);
      };
      try {
        const workspace = await this.options.workspaces.fresh(lease.id);
        const command = await this.options.sandbox.confinedCommand({
          id: lease.id,
          argv,
          env,
          workspace: workspace.path,
          readOnlyMounts: [...readOnlyMounts, ...workspace.readOnlyMounts],
          // After the read-only ones, so a directory also named among the arguments is writable.
          writableMounts: (transport.writableDirs ?? []).map((dir) => ({
            host: dir,
            sandbox: dir,
          })),
          limits: {
            memoryBytes: this.options.resources.memoryBytes,
            cpus: this.options.resources.cpus,
            pids: this.options.resources.pids,
            timeoutMs: LEASE_TTL_MS,
          },
          egressSocket: null,
        });
        confined = command;
        fd = openSync(command.seccompPath, 'r');
        const launched: LaunchedStdio = {
          spawn: {
            file: command.file,
            args: command.args,
            env: {},
            user: command.user,
            extraFds: [fd],
            inputs: [command.options],
            afterSpawn: closeFd,
          },
          release,
        };
        return launched;
      } catch (err) {
        await release();
        throw err;
      }
    };
  }

  /**
   * A lease for a connection, held from the moment it is granted: it counts as being granted from
   * before it exists until it is held, with no turn of the event loop between.
   */
  private async grant(request: LeaseRequest): Promise<Lease> {
    const key = grantKey(request);
    this.granting.set(key, (this.granting.get(key) ?? 0) + 1);
    try {
      const lease = await this.options.capacity.acquire(request, {
        budgetMs: this.options.queueBudgetMs,
        signal: new AbortController().signal,
      });
      this.held.add(lease.id);
      return lease;
    } finally {
      const left = this.granting.get(key)! - 1;
      if (left === 0) this.granting.delete(key);
      else this.granting.set(key, left);
    }
  }
}

/** What {@link McpSandbox} counts connections being granted a lease by. */
function grantKey(lease: Pick<Lease, 'tenant' | 'holder'>): string {
  return `${lease.tenant}\u0000${lease.holder}`;
}

/**
 * What of the host a server's command needs, read-only at the same paths: for each absolute path
 * among the command and its arguments outside the system directories, the `node_modules` tree it
 * lies in (so its package's dependencies resolve), else its directory.
 */
function mountsFor(argv: string[]): { host: string; sandbox: string }[] {
  const roots = new Set<string>();
  for (const word of argv) {
    if (!word.startsWith('/') || !existsSync(word)) continue;
    if (SYSTEM.some((s) => word === s || word.startsWith(`${s}/`))) continue;
    const at = word.indexOf('/node_modules/');
    const root =
      at >= 0
        ? word.slice(0, at + '/node_modules'.length)
        : statSync(word).isDirectory()
          ? word
          : dirname(word);
    roots.add(root);
  }
  const sorted = [...roots].sort();
  return sorted
    .filter((r) => !sorted.some((o) => o !== r && r.startsWith(`${o}/`)))
    .map((host) => ({ host, sandbox: host }));
}
