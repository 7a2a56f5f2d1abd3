import { execFile } from 'node:child_process';
import { chmod, chown, mkdir, readFile, readdir, rm } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { promisify } from 'node:util';
import { ErrorCode, GatehouseError } from '../core/index.js';
import { mountTmpfs, runHere, unmountAll } from './host-tmpfs.js';
import type { HostCommandRunner } from './host-tmpfs.js';
import { removeTree } from './remove-tree.js';

const run = promisify(execFile);

/** The uid and gid that own workspaces: the unprivileged user of the sandbox. */
export const SANDBOX_UID = 65534;

/** A prepared workspace: its host path and what else must be mounted for it to work. */
export interface Workspace {
  path: string;
  /** For a git worktree: the repository's git directory, read-only at the same path inside. */
  readOnlyMounts: { host: string; sandbox: string }[];
}

/**
 * Workspaces of leases (DESIGN §4): a fresh directory per invocation, or for an attempt one
 * isolated git worktree of a configured repository at a ref, shared by the attempt's calls.
 * Each lives under `root/<leaseId>`, so the reaper can find and remove what a crash left.
 */
export class Workspaces {
  constructor(
    private readonly options: {
      root: string;
      repositories: Record<string, string>;
      /**
       * Most bytes a workspace may hold: each is then a tmpfs of this size mounted at its path
       * (the gateway runs as root), so a call that writes more gets ENOSPC and the host disk is
       * untouched; its pages count against the writing run's memory limit. 0 = no bound.
       */
      maxBytes?: number;
      /** Where the bound is set, named in the hint when it cannot be applied (e.g. `X_MB=0`). */
      unboundSetting?: string;
      /** Runs `mount` and `umount` for bounded workspaces (default: from this process). */
      hostCommand?: HostCommandRunner;
    },
  ) {}

  /** An empty directory for a lease, owned by the sandbox user (a bounded tmpfs when bounded). */
  async fresh(leaseId: string): Promise<Workspace> {
    const path = this.pathFor(leaseId);
    await this.prepareRoot();
    await mkdir(path, { mode: 0o700 });
    await this.bound(path);
    await chown(path, SANDBOX_UID, SANDBOX_UID);
    return { path, readOnlyMounts: [] };
  }

  /**
   * Mounts a tmpfs of `maxBytes` at `path`, when bounded.
   * @throws GatehouseError UNAVAILABLE when it cannot be mounted (not root): set the bound to 0.
   */
  private async bound(path: string): Promise<void> {
    const max = this.options.maxBytes ?? 0;
    if (max <= 0) return;
    const opts = `size=${max},mode=0700,uid=${SANDBOX_UID},gid=${SANDBOX_UID},nosuid,nodev`;
    try {
      await mountTmpfs(
        path,
        {
          source: 'gatehouse-workspace',
          options: opts,
          what: `the ${max}-byte workspace of a lease`,
          hint: `Run as root or set ${this.options.unboundSetting ?? 'the workspace bound to 0'} to leave workspaces unbounded.`,
        },
        this.options.hostCommand ?? runHere,
      );
    } catch (err) {
      await rm(path, { recursive: true, force: true });
      throw err;
    }
  }

  /**
   * A git worktree of `repository` at `ref` for a lease.
   * @throws GatehouseError INVALID_INPUT for an unknown repository or ref.
   */
  async worktree(leaseId: string, repository: string, ref: string): Promise<Workspace> {
    const repo = this.options.repositories[repository];
    if (!repo) {
      throw new GatehouseError(
        ErrorCode.INVALID_INPUT,
        `No repository named ${JSON.stringify(repository)} is configured; configured: ${Object.keys(this.options.repositories).join(', ') || 'none'}.`,
      );
    }
    const path = this.pathFor(leaseId);
    await this.prepareRoot();
    await mkdir(path, { mode: 0o700 });
    await this.bound(path);
    try {
      await run('git', ['-C', repo, 'worktree', 'add', '--detach', path, ref]);
    } catch (err) {
      throw new GatehouseError(
        ErrorCode.INVALID_INPUT,
        `Cannot make a worktree of ${repository} at ${JSON.stringify(ref)}: ${(err as { stderr?: string }).stderr?.trim() ?? (err as Error).message}`,
      );
    }
    await run('chown', ['-R', `${SANDBOX_UID}:${SANDBOX_UID}`, path]);
    const gitDir = (
      await run('git', ['-C', repo, 'rev-parse', '--absolute-git-dir'])
    ).stdout.trim();
    return { path, readOnlyMounts: [{ host: gitDir, sandbox: gitDir }] };
  }

  /**
   * The root is 0711: the sandbox user (who runs bubblewrap) must pass through it to its own
   * workspace, but cannot list the others; each workspace is 0700 and its own.
   */
  private async prepareRoot(): Promise<void> {
    await mkdir(this.options.root, { recursive: true, mode: 0o711 });
    await chmod(this.options.root, 0o711);
  }

  /**
   * Removes a lease's workspace; for a worktree (or when the caller cannot tell, e.g. a leftover
   * the reaper found) also prunes the repositories' worktree registrations. What the workspace
   * holds decides nothing: the sandbox wrote it. An unbounded plain workspace spawns nothing, since
   * a spawn from the gateway's large process costs milliseconds of its event loop; a bounded one
   * runs `umount` (with `hostCommand`: in the sandbox's spawner) only while it is mounted, which
   * the mount table says. No depth defeats it
   * ({@link removeTree}). Safe to repeat.
   */
  async remove(leaseId: string, kind: 'plain' | 'worktree' | 'unknown' = 'unknown'): Promise<void> {
    const path = this.pathFor(leaseId);
    // A bounded workspace is a tmpfs: unmounting drops its contents at once, whatever they are.
    if ((this.options.maxBytes ?? 0) > 0)
      await unmountAll(path, this.options.hostCommand ?? runHere).catch(() => undefined);
    await removeTree(path);
    if (kind === 'plain') return;
    await Promise.all(
      Object.values(this.options.repositories).map((repo) =>
        run('git', ['-C', repo, 'worktree', 'prune']).catch(() => undefined),
      ),
    );
  }

  /**
   * Removes the bounded workspaces of leases `ids` that another gateway of this host left mounted
   * (a node that died and was taken over by this one): found by their mount point,
   * `…/workspaces/<id>`, wherever that gateway kept them. Returns the ids found. Safe to repeat.
   */
  async removeLeftByOthers(ids: readonly string[]): Promise<string[]> {
    const wanted = new Set(ids);
    const found: string[] = [];
    for (const path of await workspaceMounts()) {
      const id = basename(path);
      if (!wanted.has(id) || path === this.pathFor(id)) continue;
      await unmountAll(path, this.options.hostCommand ?? runHere);
      await removeTree(path);
      found.push(id);
    }
    return found;
  }

  /** The lease ids that have a workspace on disk. */
  async existing(): Promise<string[]> {
    try {
      return (await readdir(this.options.root, { withFileTypes: true }))
        .filter((e) => e.isDirectory())
        .map((e) => e.name);
    } catch {
      return [];
    }
  }

  /** The host path of a lease's workspace. */
  pathFor(leaseId: string): string {
    if (!/^[0-9a-zA-Z-]+$/.test(leaseId)) throw new Error(`bad lease id ${leaseId}`);
    return join(this.options.root, leaseId);
  }
}

/** Mount points named like a workspace (`…/workspaces/<id>`) in this host's mount table. */
async function workspaceMounts(): Promise<string[]> {
  const table = await readFile('/proc/self/mounts', 'utf8').catch(() => '');
  return table
    .split('\n')
    .map((line) => unescapeMountPath(line.split(' ')[1] ?? ''))
    .filter((path) => basename(dirname(path)) === 'workspaces');
}

/** A mount point as the kernel writes it (space, tab, newline and backslash as octal escapes). */
function unescapeMountPath(path: string): string {
  return path.replace(/\\([0-7]{3})/g, (_, octal: string) =>
    String.fromCharCode(parseInt(octal, 8)),
  );
}
