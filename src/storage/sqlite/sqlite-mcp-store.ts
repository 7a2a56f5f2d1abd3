import type { LedgerEntries } from '../../core/index.js';
import type {
  Discovery,
  McpBinding,
  McpServerRecord,
  McpServerState,
  McpStore,
  McpStoreChange,
} from '../../mcp/index.js';
import { bindingRow, discoveryRow, mcpServerChanges, mcpServerRow } from '../sql/mcp-rows.js';
import { appendLedger } from './sqlite-ledger.js';
import type { SqliteDatabase } from './sqlite-database.js';

/** {@link McpStore} on SQLite. */
export class SqliteMcpStore implements McpStore {
  constructor(private readonly db: SqliteDatabase) {}

  create(server: McpServerRecord, ledger: LedgerEntries): Promise<boolean> {
    return this.db.write(() => {
      const same = this.db.first(
        this.db.kysely
          .selectFrom('mcp_servers')
          .select('id')
          .where('tenant', '=', server.tenant)
          .where('identity', '=', server.identity)
          .where('state', '!=', 'retired'),
      );
      if (same) return false;
      this.db.run(this.db.kysely.insertInto('mcp_servers').values(mcpServerRow(server)));
      appendLedger(this.db, ledger);
      return true;
    });
  }

  update(change: McpStoreChange, ledger: LedgerEntries): Promise<boolean> {
    return this.db.write(() => {
      const k = this.db.kysely;
      const s = change.server;
      if (s) {
        const changed = this.db.run(
          k
            .updateTable('mcp_servers')
            .set(mcpServerChanges(s))
            .where('id', '=', change.serverId)
            .where('tenant', '=', change.tenant)
            .where('version', '=', s.version - 1),
        ).changes;
        if (changed !== 1) return false;
      }
      if (change.discovery) {
        const row = discoveryRow(change.serverId, change.tenant, change.discovery);
        this.db.run(
          k
            .insertInto('mcp_discoveries')
            .values(row)
            .onConflict((oc) =>
              oc
                .column('server_id')
                .doUpdateSet({ record: row.record, discovered_at: row.discovered_at }),
            ),
        );
      }
      for (const b of change.bindings ?? []) {
        const row = bindingRow(change.serverId, change.tenant, b);
        this.db.run(
          k
            .insertInto('mcp_bindings')
            .values(row)
            .onConflict((oc) =>
              oc
                .columns(['server_id', 'tool'])
                .doUpdateSet({ state: row.state, record: row.record, updated_at: row.updated_at }),
            ),
        );
      }
      appendLedger(this.db, ledger);
      return true;
    });
  }

  // get, discovery and binding are read on every tool call (the call check): fixed shapes, so
  // they run on prepared statements without building the query again.
  get(tenant: string, id: string): Promise<McpServerRecord | undefined> {
    const row = this.db.firstPrepared(
      'mcp-server',
      (p) =>
        this.db.kysely
          .selectFrom('mcp_servers')
          .select('record')
          .where('tenant', '=', p('tenant'))
          .where('id', '=', p('id')),
      { tenant, id },
    );
    return Promise.resolve(row ? (JSON.parse(row.record) as McpServerRecord) : undefined);
  }

  list(tenant: string): Promise<McpServerRecord[]> {
    const rows = this.db.all(
      this.db.kysely
        .selectFrom('mcp_servers')
        .select('record')
        .where('tenant', '=', tenant)
        .orderBy('created_at')
        .orderBy('id'),
    );
    return Promise.resolve(rows.map((r) => JSON.parse(r.record) as McpServerRecord));
  }

  listInStates(states: McpServerState[]): Promise<McpServerRecord[]> {
    if (states.length === 0) return Promise.resolve([]);
    const rows = this.db.all(
      this.db.kysely
        .selectFrom('mcp_servers')
        .select('record')
        .where('state', 'in', states)
        .orderBy('created_at')
        .orderBy('id'),
    );
    return Promise.resolve(rows.map((r) => JSON.parse(r.record) as McpServerRecord));
  }

  discovery(tenant: string, serverId: string): Promise<Discovery | undefined> {
    const row = this.db.firstPrepared(
      'mcp-discovery',
      (p) =>
        this.db.kysely
          .selectFrom('mcp_discoveries')
          .select('record')
          .where('tenant', '=', p('tenant'))
          .where('server_id', '=', p('serverId')),
      { tenant, serverId },
    );
    return Promise.resolve(row ? (JSON.parse(row.record) as Discovery) : undefined);
  }

  bindings(tenant: string, serverId: string): Promise<McpBinding[]> {
    const rows = this.db.all(
      this.db.kysely
        .selectFrom('mcp_bindings')
        .select('record')
        .where('tenant', '=', tenant)
        .where('server_id', '=', serverId)
        .orderBy('tool'),
    );
    return Promise.resolve(rows.map((r) => JSON.parse(r.record) as McpBinding));
  }

  binding(tenant: string, serverId: string, tool: string): Promise<McpBinding | undefined> {
    const row = this.db.firstPrepared(
      'mcp-binding',
      (p) =>
        this.db.kysely
          .selectFrom('mcp_bindings')
          .select('record')
          .where('tenant', '=', p('tenant'))
          .where('server_id', '=', p('serverId'))
          .where('tool', '=', p('tool')),
      { tenant, serverId, tool },
    );
    return Promise.resolve(row ? (JSON.parse(row.record) as McpBinding) : undefined);
  }
}
