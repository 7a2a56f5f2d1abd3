import { transition } from '../core/index.js';
import type { Transitions } from '../core/index.js';
import type { CredentialNeed } from '../secrets/index.js';

/** Lifecycle of an upstream MCP server (DESIGN §5). */
export const McpServerState = {
  registered: 'registered',
  verified: 'verified',
  active: 'active',
  degraded: 'degraded',
  retired: 'retired',
} as const;
export type McpServerState = (typeof McpServerState)[keyof typeof McpServerState];

const transitions: Transitions<McpServerState> = {
  registered: ['verified', 'retired'],
  verified: ['active', 'retired'],
  active: ['degraded', 'retired'],
  degraded: ['active', 'retired'],
  retired: [],
};

/** True when the lifecycle allows moving from `from` to `to`. */
export function canTransitionMcpServer(from: McpServerState, to: McpServerState): boolean {
  return transitions[from].includes(to);
}

/**
 * The server state after moving from `from` to `to`.
 * @throws IllegalStateError when the move is not in the table (callers check first).
 */
export function transitionMcpServer(from: McpServerState, to: McpServerState): McpServerState {
  return transition('MCP server', transitions, from, to);
}

/**
 * How Gatehouse reaches an upstream server. `credentials` name secrets the broker issues for each
 * connection (never their values): environment variables of a stdio server, headers of the HTTP
 * requests to an HTTP one. `writableDirs` are what a sandboxed stdio server may write.
 */
export type McpTransport =
  | {
      type: 'stdio';
      command: string;
      args: string[];
      env?: Record<string, string>;
      credentials?: CredentialNeed[];
      /**
       * Host directories mounted read-write, at the same paths, in the server's sandbox (the rest
       * of the host it sees is read-only). Checked at registration: existing, absolute, real
       * paths clear of the system and of the gateway's own directories.
       */
      writableDirs?: string[];
    }
  | { type: 'http'; url: string; credentials?: CredentialNeed[] };

/** A registered upstream MCP server of a tenant. */
export interface McpServerRecord {
  id: string;
  tenant: string;
  /** A label; not part of the identity. */
  name: string;
  transport: McpTransport;
  /** SHA-256 hex of the JCS of what makes the server what it is (see `serverIdentity`). */
  identity: string;
  state: McpServerState;
  /**
   * For a stdio server: whether its last connection ran inside a sandbox lease (absent until it
   * first connected, and for HTTP servers).
   */
  sandboxed?: boolean;
  /** Why it is in its state (the last probe failure, the retirement reason). */
  stateReason: string | null;
  /** Starts at 1; each update adds one (compare-and-set). */
  version: number;
  registeredBy: string;
  createdAt: string;
  updatedAt: string;
}
