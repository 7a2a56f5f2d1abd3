import type { Generated } from 'kysely';

/**
 * The relational schema shared by every SQL implementation. Column types are the portable subset:
 * text, integer, bigint, and binary (SQLite blob, PostgreSQL bytea) for Merkle hashes; JSON is
 * stored as text, booleans as 0/1 integers.
 */
export interface Tables {
  tenants: { id: string; name: string; created_at: string };
  projects: { tenant: string; id: string; created_at: string };
  environments: {
    tenant: string;
    project: string;
    name: string;
    class: string;
    frozen: number;
  };
  principals: {
    id: string;
    tenant: string;
    name: string;
    roles: string;
    project: string | null;
    agent_id: string | null;
    agent_version: string | null;
    created_at: string;
  };
  tokens: {
    id: string;
    tenant: string;
    principal: string;
    label: string | null;
    /** Lowercase hex SHA-256 of the secret. */
    hash: string;
    created_at: string;
    created_by: string;
    expires_at: string;
    revoked_at: string | null;
    revoked_by: string | null;
    revoke_reason: string | null;
    replaced_by: string | null;
    last_used_at: string | null;
  };
  applied_events: {
    tenant: string;
    event_id: string;
    type: string;
    asset: string;
    sequence: number | null;
    digest: string;
    applied_at: string;
  };
  descriptors: {
    tenant: string;
    tool_id: string;
    version: string;
    state: string;
    descriptor: string;
    digest: string;
    in_flight_policy: string;
    state_reason: string | null;
    published_at: string;
    updated_at: string;
  };
  agent_releases: {
    tenant: string;
    agent_id: string;
    version: string;
    release: string;
    digest: string;
    published_at: string;
  };
  policies: {
    tenant: string;
    project: string;
    text: string;
    version: number;
    updated_at: string;
  };
  invocations: {
    id: string;
    tenant: string;
    principal: string;
    idempotency_key: string;
    attempt: number;
    request_hash: string;
    status: string;
    tool_id: string;
    record: string;
    created_at: string;
    updated_at: string;
    /** The node that last ran or queued it (from migration 0008); null before. */
    node: string | null;
    /** The tool id without its version (from migration 0007, as the next two). */
    tool_name: string;
    /** The agent id of the record. */
    agent_id: string;
    environment: string;
  };
  approvals: {
    id: string;
    tenant: string;
    invocation_id: string;
    tool_id: string;
    status: string;
    version: number;
    record: string;
    expires_at: string;
    created_at: string;
    updated_at: string;
    /** The principal whose call it is (from migration 0005). */
    requested_by: string | null;
  };
  receipts: { invocation_id: string; tenant: string; envelope: string };
  audit_records: { tenant: string; idx: number; record: string; leaf_hash: string };
  /** The hash of each complete perfect subtree of level ≥ 1 of a tenant's log (`SubtreeRef`). */
  audit_nodes: { tenant: string; level: number; idx: number; hash: Buffer };
  /**
   * PostgreSQL only: each tenant's log size, the row an append locks (and advances) so that every
   * node extends one tree.
   */
  audit_heads: { tenant: string; size: number };
  checkpoints: {
    tenant: string;
    tree_size: number;
    root_hash: string;
    timestamp: string;
    keyid: string;
    signature: string;
  };
  outbox: {
    seq: Generated<number>;
    tenant: string;
    type: string;
    subject: string;
    at: string;
    data: string;
    /** The principal whose call the event is about, or null for the tenant's own events. */
    owner: string | null;
  };
  secrets: {
    tenant: string;
    name: string;
    version: number;
    scopes: string;
    ciphertext: string;
    iv: string;
    tag: string;
    key_id: string;
    created_at: string;
    deleted_at: string | null;
  };
  leases: {
    id: string;
    tenant: string;
    pool: string;
    /** What holds the lease: `invocation/<id>` or `attempt/<principal>/<runId>/<attemptId>`. */
    holder: string;
    status: string;
    record: string;
    expires_at: string;
    created_at: string;
    updated_at: string;
    /** The node whose sandbox holds it (from migration 0008); null before. */
    node: string | null;
  };
  /** Gateway nodes on this database, with their heartbeats (from migration 0008). */
  nodes: {
    id: string;
    host: string;
    pid: number;
    /** `alive`, `stopped` (deregistered) or `claimed` (taken over by another node). */
    status: string;
    started_at: string;
    heartbeat_at: string;
    /** When it deregistered or was claimed. */
    ended_at: string | null;
    /** The node that took it over. */
    claimed_by: string | null;
  };
  mcp_servers: {
    id: string;
    tenant: string;
    name: string;
    /** SHA-256 hex of the server's identity; unique per tenant among servers not retired. */
    identity: string;
    state: string;
    version: number;
    record: string;
    created_at: string;
    updated_at: string;
  };
  mcp_discoveries: {
    server_id: string;
    tenant: string;
    record: string;
    discovered_at: string;
  };
  mcp_bindings: {
    server_id: string;
    tool: string;
    tenant: string;
    state: string;
    record: string;
    updated_at: string;
  };
  /** PostgreSQL only: the signing keys shared by the nodes. */
  signing_keys: {
    kid: string;
    x: string;
    created_at: string;
    retired_at: string | null;
    /** JSON of the sealed PKCS8 PEM private key; null once retired. */
    sealed: string | null;
  };
  /** PostgreSQL only: the agents' MCP sessions, shared by the nodes. */
  mcp_sessions: {
    id: string;
    tenant: string;
    principal: string;
    token_id: string;
    /** JSON of the client's initialize params. */
    initialize: string;
    created_at: string;
  };
  /** PostgreSQL only: the events of those sessions' streams, kept a while for replay. */
  mcp_stream_events: {
    seq: Generated<string>;
    session_id: string;
    stream_id: string;
    /** JSON of the JSON-RPC message (`{}` for a priming event). */
    message: string;
    bytes: number;
    /** Milliseconds since the epoch when it was kept. */
    created_ms: string;
  };
}
