import { join } from 'node:path';
import type { Kysely } from 'kysely';
import { ErrorCode, GatehouseError } from '../core/index.js';
import type { OutboxFeed } from '../core/index.js';
import type { ApprovalStore } from '../approvals/index.js';
import type { AuditStore, SigningKeyStore } from '../audit/index.js';
import type { LeaseStore, NodeStore } from '../capacity/index.js';
import type { InvocationStore } from '../invocation/index.js';
import type { McpStore } from '../mcp/index.js';
import type { PolicyStore } from '../policy/index.js';
import type { SecretStore } from '../secrets/index.js';
import type { McpSessionStore, McpStreamEventStore, TenancyStore } from '../tenancy/index.js';
import type { ToolStore } from '../tools/index.js';
import {
  PostgresApprovalStore,
  PostgresAuditStore,
  PostgresDatabase,
  PostgresInvocationStore,
  PostgresLeaseStore,
  PostgresNodeStore,
  PostgresMcpSessionStore,
  PostgresMcpStreamEventStore,
  PostgresMcpStore,
  PostgresOutboxFeed,
  PostgresPolicyStore,
  PostgresSecretStore,
  PostgresSigningKeyStore,
  PostgresTenancyStore,
  PostgresToolStore,
  SqliteApprovalStore,
  SqliteAuditStore,
  SqliteDatabase,
  SqliteInvocationStore,
  SqliteLeaseStore,
  SqliteNodeStore,
  SqliteMcpStore,
  SqliteOutboxFeed,
  SqlitePolicyStore,
  SqliteSecretStore,
  SqliteTenancyStore,
  SqliteToolStore,
  latestId,
  postgresLatestId,
} from '../storage/index.js';
import type { Tables } from '../storage/index.js';
import type { GatewayConfig } from './config.js';

/** Every store of a gateway, on one database, and what the gateway watches of that database. */
export interface Storage {
  /** The embedded SQLite file, or a PostgreSQL database shared by nodes. */
  kind: 'sqlite' | 'postgres';
  /** The SQLite database (tests and offline checks reach into it); undefined on PostgreSQL. */
  sqlite: SqliteDatabase | undefined;
  /** The database, whichever it is, for queries no store answers (tests and offline checks). */
  kysely: Kysely<Tables>;
  tools: ToolStore;
  tenancy: TenancyStore;
  invocations: InvocationStore;
  approvals: ApprovalStore;
  audit: AuditStore;
  policies: PolicyStore;
  secrets: SecretStore;
  leases: LeaseStore;
  /** The gateway nodes on this database and their heartbeats. */
  nodes: NodeStore;
  mcp: McpStore;
  outbox: OutboxFeed;
  /** The signing keys shared by the nodes (PostgreSQL); undefined on SQLite (they are files). */
  signingKeys: SigningKeyStore | undefined;
  /** The agents' MCP sessions shared by the nodes (PostgreSQL); undefined on SQLite (in memory). */
  mcpSessions: McpSessionStore | undefined;
  /** Their streams' events kept for replay (PostgreSQL); undefined on SQLite (in memory). */
  mcpStreamEvents: McpStreamEventStore | undefined;
  /** The largest stored invocation, approval or lease id, so new ids start above it. */
  latestId(): Promise<string | undefined>;
  /** Null while storage takes writes; else why the last write failed. */
  storageProblem(): string | null;
  /** Calls `listener` with the code of each write storage refused; returns the unsubscribe. */
  onStorageError(listener: (code: string) => void): () => void;
  /** Flushes queued writes and closes the database. Safe to call twice. */
  close(): Promise<void>;
}

/** True when `db` (`--db`, `GATEHOUSE_DB`) names a PostgreSQL database. */
export function isPostgresUrl(db: string | undefined): db is string {
  return db !== undefined && /^postgres(ql)?:\/\//.test(db);
}

/**
 * Opens the configured database and its stores: PostgreSQL for a `postgres://` URL, else the
 * SQLite file (`sqlite:PATH`, a path, or DATA/gatehouse.db by default). Migrates it.
 * @throws when it cannot be opened or migrated.
 */
export async function openStorage(config: GatewayConfig): Promise<Storage> {
  if (isPostgresUrl(config.db)) {
    const db = await PostgresDatabase.open({ url: config.db, poolSize: config.dbPoolSize });
    return {
      kind: 'postgres',
      sqlite: undefined,
      kysely: db.kysely,
      tools: new PostgresToolStore(db),
      tenancy: new PostgresTenancyStore(db),
      invocations: new PostgresInvocationStore(db),
      approvals: new PostgresApprovalStore(db),
      audit: new PostgresAuditStore(db),
      policies: new PostgresPolicyStore(db),
      secrets: new PostgresSecretStore(db),
      leases: new PostgresLeaseStore(db),
      nodes: new PostgresNodeStore(db),
      mcp: new PostgresMcpStore(db),
      outbox: new PostgresOutboxFeed(db),
      signingKeys: new PostgresSigningKeyStore(db),
      mcpSessions: new PostgresMcpSessionStore(db),
      mcpStreamEvents: new PostgresMcpStreamEventStore(db, config.mcp.streams),
      latestId: () => postgresLatestId(db),
      storageProblem: () => db.storageProblem,
      onStorageError: (listener) => db.onStorageError(listener),
      close: () => db.close(),
    };
  }
  const db = await SqliteDatabase.open({
    file: sqliteFile(config),
    synchronous: config.synchronous,
  });
  return {
    kind: 'sqlite',
    sqlite: db,
    kysely: db.kysely,
    tools: new SqliteToolStore(db),
    tenancy: new SqliteTenancyStore(db),
    invocations: new SqliteInvocationStore(db),
    approvals: new SqliteApprovalStore(db),
    audit: new SqliteAuditStore(db),
    policies: new SqlitePolicyStore(db),
    secrets: new SqliteSecretStore(db),
    leases: new SqliteLeaseStore(db),
    nodes: new SqliteNodeStore(db),
    mcp: new SqliteMcpStore(db),
    outbox: new SqliteOutboxFeed(db),
    signingKeys: undefined,
    mcpSessions: undefined,
    mcpStreamEvents: undefined,
    latestId: () => Promise.resolve(latestId(db)),
    storageProblem: () => db.storageProblem,
    onStorageError: (listener) => db.onStorageError(listener),
    close: () => db.close(),
  };
}

function sqliteFile(config: GatewayConfig): string {
  const db = config.db;
  if (db === undefined) return join(config.dataDir, 'gatehouse.db');
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(db)) {
    throw new GatehouseError(
      ErrorCode.INVALID_INPUT,
      `--db (GATEHOUSE_DB) must be postgres://…, sqlite:PATH or a file path; got a ${db.split(':')[0]} URL.`,
    );
  }
  return db.startsWith('sqlite:') ? db.slice('sqlite:'.length) : db;
}
