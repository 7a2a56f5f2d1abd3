import { randomBytes } from 'node:crypto';
import { chmod, chown, lstat, mkdir, rm } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import {
  ErrorCode,
  GatehouseError,
  IllegalStateError,
  ResourceLifecycle,
  isoTime,
} from '../core/index.js';
import { mountTmpfs, unmountAll } from '../sandbox/index.js';
import { EgressAllowList } from './allow-list.js';
import { systemResolve } from './authorize.js';
import type { EgressResolver } from './authorize.js';
import type { EgressDecision } from './decision.js';
import { EgressLeaseServer } from './lease-server.js';
import type { EgressLimits } from './lease-server.js';
import type { ResponseScrub } from './response-scrub.js';

/** One lease's egress proxy endpoint. */
export interface EgressLease {
  /**
   * The Unix socket to bind into the lease's sandbox (bind the socket file itself, e.g.
   * `--ro-bind <socketPath> /run/gatehouse/egress.sock`, never its directory).
   */
  readonly socketPath: string;
  /** Every decision so far, oldest first (a copy), up to the proxy's `maxDecisions`. */
  decisions(): EgressDecision[];
  /** How many decisions were made beyond `maxDecisions` and so are not in {@link decisions}. */
  omittedDecisions(): number;
  /** Stops the endpoint, ends open tunnels and requests, removes the socket. Safe to call twice. */
  close(): Promise<void>;
}

/** Options of {@link EgressProxy.open} beyond the allow-list. */
export interface EgressLeaseOptions {
  /**
   * Headers to add to a plain-HTTP request, given its exact origin (`http://host:port`, the port
   * explicit even when 80; see `exactOrigin`), e.g. a brokered `Authorization` bound to that
   * origin (`headersForOrigin`); they replace client headers of the same name and are never
   * recorded. Not applied to CONNECT tunnels, whose content is the client's TLS.
   */
  injectHeaders?: (origin: string) => Record<string, string>;
  /**
   * Applied to the answers of requests that got injected headers, so an upstream that echoes them
   * cannot hand the credential to the program; such a request asks for an uncompressed answer,
   * and a compressed one is withheld (502).
   */
  scrub?: ResponseScrub;
}

/** Options of {@link EgressProxy}. */
export interface EgressProxyOptions {
  /** Where per-lease sockets are created; made (or tightened to) mode 0700. */
  dir: string;
  /** DNS lookup; by default `dns.promises.lookup` with `all: true`. */
  resolve?: EgressResolver;
  /** Milliseconds since the epoch, for decision times. */
  now?: () => number;
  limits?: Partial<EgressLimits>;
  /** Decisions kept per lease for {@link EgressLease.decisions}; the rest are only counted. */
  maxDecisions?: number;
  /**
   * The host user the sandbox runs as, when it is not the gateway's (a root gateway runs sandboxes
   * as `nobody`). bubblewrap, running as that user, must reach the socket to bind it: each socket
   * then lives in its own 0700 directory owned by that user (inside a 0711 `dir`), so only that
   * user — the sandboxes, each of which sees only its own socket — can reach it.
   */
  socketOwner?: { uid: number; gid: number };
  /**
   * Mount a small tmpfs at `dir` on first use (needs root) and unmount it on close. Each socket
   * then lies on a filesystem of its own, so what a sandbox reads of its bind in
   * /proc/self/mountinfo is `/<name>/proxy.sock` on `gatehouse-egress`, not `dir`. A tmpfs a
   * killed gateway left at `dir` is unmounted first.
   */
  mountTmpfs?: boolean;
}

/** Size of the sockets' tmpfs: sockets and their directories take no data blocks. */
const TMPFS_OPTIONS = 'size=64k,mode=0711,nosuid,nodev,noexec';

const DEFAULT_LIMITS: EgressLimits = {
  maxHeaderBytes: 16 * 1024,
  idleTimeoutMs: 120_000,
  connectTimeoutMs: 10_000,
  maxConnections: 256,
};

const LEASE_ID = /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/;
/** sun_path is 108 bytes on Linux, including the terminating NUL. */
const MAX_SOCKET_PATH = 107;

/**
 * The egress proxy: one HTTP proxy endpoint per sandbox lease, on a Unix socket, allowing only
 * that lease's allow-list (see {@link EgressAllowList}) and recording every attempt.
 *
 * Socket permissions: the directory is 0700, owned by the gateway, so no other host user can reach
 * any socket in it. Each socket is chmod 0666 after `listen` so the sandboxed process can connect
 * whatever uid it runs as (65534 in the sandbox maps to the gateway's uid under an unprivileged user
 * namespace, but to a real other uid under a setuid helper; `connect` needs write permission on the
 * socket inode either way). The sandbox reaches its socket only because the sandbox helper
 * bind-mounts that one socket file; path lookup inside the sandbox never crosses the 0700
 * directory, and no sandbox can see another lease's socket. Between `listen` and `chmod` the
 * socket is unreachable (0700 directory), so there is no window.
 */
export class EgressProxy {
  private readonly resolve: EgressResolver;
  private readonly now: () => number;
  private readonly limits: EgressLimits;
  private readonly maxDecisions: number;
  private readonly leases = new Map<string, EgressLease>();
  /** Lease ids open or opening, so one id never gets two endpoints. */
  private readonly leaseIds = new Set<string>();
  private readonly state = new ResourceLifecycle('the egress proxy');
  /** Whether the sockets' tmpfs is mounted; set on first use with `mountTmpfs`. */
  private mounted: Promise<boolean> | undefined;

  constructor(private readonly options: EgressProxyOptions) {
    this.resolve = options.resolve ?? systemResolve;
    this.now = options.now ?? Date.now;
    this.limits = { ...DEFAULT_LIMITS, ...options.limits };
    this.maxDecisions = options.maxDecisions ?? 10_000;
  }

  /**
   * Opens the proxy endpoint of one lease, allowing only `allow`: `host`, `host:port`,
   * `*.example.com`, `*.example.com:443`, or an IP literal / CIDR (`10.0.0.0/8`, `[fd00::/8]:443`).
   * An entry without a port allows 443 and 80. IP-literal targets and names resolving to
   * non-public addresses are refused unless an IP or CIDR entry lists them.
   * @throws GatehouseError `INVALID_INPUT` for a malformed entry or lease id.
   * @throws IllegalStateError when the lease is already open or the proxy is closed.
   */
  async open(
    leaseId: string,
    allow: string[],
    onDecision?: (decision: EgressDecision) => void,
    options: EgressLeaseOptions = {},
  ): Promise<EgressLease> {
    if (!this.state.isOpen) throw new IllegalStateError('the egress proxy is closed');
    if (!LEASE_ID.test(leaseId)) {
      throw new GatehouseError(
        ErrorCode.INVALID_INPUT,
        `lease id "${leaseId}" cannot name a socket`,
      );
    }
    if (this.leaseIds.has(leaseId)) {
      throw new IllegalStateError(`an egress endpoint for lease ${leaseId} is already open`);
    }
    const allowList = EgressAllowList.parse(allow);
    // Named at random, never by the lease: the sandbox sees the name in /proc/self/mountinfo.
    const name = randomBytes(9).toString('base64url');
    const socketPath = this.options.socketOwner
      ? join(this.options.dir, name, 'proxy.sock')
      : join(this.options.dir, `${name}.sock`);
    if (Buffer.byteLength(socketPath) > MAX_SOCKET_PATH) {
      throw new GatehouseError(
        ErrorCode.INVALID_INPUT,
        `egress socket path ${socketPath} is longer than ${MAX_SOCKET_PATH} bytes; use a shorter directory`,
      );
    }
    this.leaseIds.add(leaseId);
    try {
      return await this.listen(leaseId, socketPath, allowList, onDecision, options);
    } catch (err) {
      this.leaseIds.delete(leaseId);
      throw err;
    }
  }

  /** Closes every open lease endpoint; later `open` calls throw. Safe to call twice. */
  close(): Promise<void> {
    return this.state.close(async () => {
      await Promise.all([...this.leases.values()].map((l) => l.close()));
      if (this.mounted !== undefined && (await this.mounted.catch(() => false))) {
        await unmountAll(this.options.dir);
      }
    });
  }

  private async listen(
    leaseId: string,
    socketPath: string,
    allowList: EgressAllowList,
    onDecision: ((decision: EgressDecision) => void) | undefined,
    options: EgressLeaseOptions,
  ): Promise<EgressLease> {
    await this.prepareDir();
    const owner = this.options.socketOwner;
    const leaseDir = owner ? dirname(socketPath) : undefined;
    if (leaseDir) {
      await rm(leaseDir, { recursive: true, force: true });
      await mkdir(leaseDir, { mode: 0o700 });
    }
    // A socket left by a crashed gateway would make listen fail; it is ours to remove.
    await rm(socketPath, { force: true });

    const kept: EgressDecision[] = [];
    let omitted = 0;
    const server = await EgressLeaseServer.listen({
      socketPath,
      allowList,
      resolve: this.resolve,
      now: this.now,
      limits: this.limits,
      ...(options.injectHeaders === undefined ? {} : { injectHeaders: options.injectHeaders }),
      ...(options.scrub === undefined ? {} : { scrub: options.scrub }),
      record: (d) => {
        const decision: EgressDecision = { ...d, at: isoTime(d.at) };
        if (kept.length < this.maxDecisions) kept.push(decision);
        else omitted++;
        onDecision?.(decision);
      },
    });
    await chmod(socketPath, 0o666);
    if (owner && leaseDir) await chown(leaseDir, owner.uid, owner.gid);
    let closing: Promise<void> | undefined;
    const lease: EgressLease = {
      socketPath,
      decisions: () => kept.map((d) => ({ ...d })),
      omittedDecisions: () => omitted,
      close: () =>
        (closing ??= (async () => {
          await server.close();
          await rm(leaseDir ?? socketPath, { recursive: true, force: true });
          this.leases.delete(leaseId);
          this.leaseIds.delete(leaseId);
        })()),
    };
    this.leases.set(leaseId, lease);
    if (!this.state.isOpen) {
      await lease.close();
      throw new IllegalStateError('the egress proxy was closed while a lease endpoint opened');
    }
    return lease;
  }

  private async prepareDir(): Promise<void> {
    const { dir } = this.options;
    const mode = this.options.socketOwner ? 0o711 : 0o700;
    await mkdir(dir, { recursive: true, mode });
    if (this.options.mountTmpfs === true) {
      // A tmpfs a killed gateway left at `dir` goes first.
      this.mounted ??= unmountAll(dir)
        .then(() =>
          mountTmpfs(dir, {
            source: 'gatehouse-egress',
            options: TMPFS_OPTIONS,
            what: "the egress sockets' tmpfs",
          }),
        )
        .then(() => true);
      await this.mounted;
    }
    const stat = await lstat(dir);
    if (!stat.isDirectory() || stat.uid !== process.getuid?.()) {
      throw new IllegalStateError(`egress socket directory ${dir} is not a directory we own`);
    }
    await chmod(dir, mode);
  }
}
