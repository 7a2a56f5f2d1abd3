import type { Clock, IdGenerator } from '../core/index.js';
import type { CredentialNeed } from '../secrets/index.js';
import type { McpStore } from './mcp-store.js';
import type { ConnectionCredentials, StdioLauncher } from './upstream/connection-options.js';
import type { PinnedFetch } from '../egress/index.js';
import type { ProtectedDir } from './writable-dirs.js';

/** Collaborators and settings of the {@link McpService}. */
export interface McpServiceOptions {
  store: McpStore;
  clock: Clock;
  ids: IdGenerator;
  /**
   * Egress check of HTTP upstream URLs at registration: null when allowed, else why not. The URL
   * has passed `defaultCheckUrl` (a URL, http or https, no credentials) and the
   * credential needs their checks first. Default: nothing more.
   */
  checkUrl?: (url: string) => string | null;
  /**
   * Authorizes egress to an HTTP upstream for each new connection (reconnects too) and returns
   * the fetch its requests go through. Absent: the global fetch, no check at connect.
   * @throws Error saying why egress is refused; the connection fails (UNAVAILABLE,
   *   SERVER_UNAVAILABLE) and no credentials are issued.
   */
  connectHttp?: (url: URL) => Promise<PinnedFetch>;
  /**
   * Host directories no stdio server may be given to write (`transport.writableDirs`), nor one
   * that contains them: the gateway's data directory, the sandbox root. Default none.
   */
  protectedDirs?: ProtectedDir[];
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
  /**
   * Largest single message accepted from an upstream, a stdio line or one message of an HTTP
   * answer (default 4 MiB); a bigger one closes the connection and fails the calls on it.
   */
  maxMessageBytes?: number;
  /**
   * Where `maxMessageBytes` is set (e.g. the environment variable), for the error of a message
   * over it; absent, the error names the bound only.
   */
  maxMessageBytesSetting?: string;
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

/** The settings of {@link McpServiceOptions}, each given or defaulted. */
export type McpSettings = Required<
  Omit<
    McpServiceOptions,
    | 'store'
    | 'clock'
    | 'ids'
    | 'issueCredentials'
    | 'stdioLauncher'
    | 'connectHttp'
    | 'maxMessageBytesSetting'
  >
>;

/** The settings of `o`, with the defaults for those it leaves out. */
export function mcpSettings(options: McpServiceOptions): McpSettings {
  return {
    checkUrl: options.checkUrl ?? (() => null),
    protectedDirs: options.protectedDirs ?? [],
    probeIntervalMs: options.probeIntervalMs ?? 30_000,
    failuresToDegrade: options.failuresToDegrade ?? 3,
    reprobeMs: options.reprobeMs ?? 1000,
    requestTimeoutMs: options.requestTimeoutMs ?? 10_000,
    baseBackoffMs: options.baseBackoffMs ?? 500,
    maxBackoffMs: options.maxBackoffMs ?? 30_000,
    maxMessageBytes: options.maxMessageBytes ?? 4 * 1024 * 1024,
  };
}
