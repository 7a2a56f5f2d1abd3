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
import { appendLedger } from './postgres-ledger.js';
import type { PostgresDatabase } from './postgres-database.js';

/** {@link McpStore} on PostgreSQL. */
export class PostgresMcpStore implements McpStore {
  constructor(private readonly db: PostgresDatabase) {}

  create(server: McpServerRecord, ledger: LedgerEntries): Promise<boolean> {
    return this.db.write(async (tx) => {
      // Writes take turns (the database's write lock): no other server of this identity appears
      // before the insert.
      const same = await tx
        .selectFrom('mcp_servers')
        .select('id')
        .where('tenant', '=', server.tenant)
        .where('identity', '=', server.identity)
        .where('state', '!=', 'retired')
        .executeTakeFirst();
      if (same) return false;
      await tx.insertInto('mcp_servers').values(mcpServerRow(server)).execute();
      await appendLedger(tx, ledger);
      return true;
    });
  }

  update(change: McpStoreChange, ledger: LedgerEntries): Promise<boolean> {
    return this.db.write(async (tx) => {
      const s = change.server;
      if (s) {
        const r = await tx
          .updateTable('mcp_servers')
          .set(mcpServerChanges(s))
          .where('id', '=', change.serverId)
          .where('tenant', '=', change.tenant)
          .where('version', '=', s.version - 1)
          .executeTakeFirst();
        if (Number(r.numUpdatedRows) !== 1) return false;
      }
      if (change.discovery) {
        const row = discoveryRow(change.serverId, change.tenant, change.discovery);
        await tx
          .insertInto('mcp_discoveries')
          .values(row)
          .onConflict((oc) =>
            oc
              .column('server_id')
              .doUpdateSet({ record: row.record, discovered_at: row.discovered_at }),
          )
          .execute();
      }
      for (const b of change.bindings ?? []) {
        const row = bindingRow(change.serverId, change.tenant, b);
        await tx
          .insertInto('mcp_bindings')
          .values(row)
          .onConflict((oc) =>
            oc
              .columns(['server_id', 'tool'])
              .doUpdateSet({ state: row.state, record: row.record, updated_at: row.updated_at }),
          )
          .execute();
      }
      await appendLedger(tx, ledger);
      return true;
    });
  }

  async get(tenant: string, id: string): Promise<McpServerRecord | undefined> {
    const row = await this.db.kysely
      .selectFrom('mcp_servers')
      .select('record')
      .where('tenant', '=', tenant)
      .where('id', '=', id)
      .executeTakeFirst();
    return row ? (JSON.parse(row.record) as McpServerRecord) : undefined;
  }

  async list(tenant: string): Promise<McpServerRecord[]> {
    const rows = await this.db.kysely
      .selectFrom('mcp_servers')
      .select('record')
      .where('tenant', '=', tenant)
      .orderBy('created_at')
      .orderBy('id')
      .execute();
    return rows.map((r) => JSON.parse(r.record) as McpServerRecord);
  }

  async listInStates(states: McpServerState[]): Promise<McpServerRecord[]> {
    if (states.length === 0) return [];
    const rows = await this.db.kysely
      .selectFrom('mcp_servers')
      .select('record')
      .where('state', 'in', states)
      .orderBy('created_at')
      .orderBy('id')
      .execute();
    return rows.map((r) => JSON.parse(r.record) as McpServerRecord);
  }

  async discovery(tenant: string, serverId: string): Promise<Discovery | undefined> {
    const row = await this.db.kysely
      .selectFrom('mcp_discoveries')
      .select('record')
      .where('tenant', '=', tenant)
      .where('server_id', '=', serverId)
      .executeTakeFirst();
    return row ? (JSON.parse(row.record) as Discovery) : undefined;
  }

  async bindings(tenant: string, serverId: string): Promise<McpBinding[]> {
    const rows = await this.db.kysely
      .selectFrom('mcp_bindings')
      .select('record')
      .where('tenant', '=', tenant)
      .where('server_id', '=', serverId)
      .orderBy('tool')
      .execute();
    return rows.map((r) => JSON.parse(r.record) as McpBinding);
  }

  async binding(tenant: string, serverId: string, tool: string): Promise<McpBinding | undefined> {
    const row = await this.db.kysely
      .selectFrom('mcp_bindings')
      .select('record')
      .where('tenant', '=', tenant)
      .where('server_id', '=', serverId)
      .where('tool', '=', tool)
      .executeTakeFirst();
    return row ? (JSON.parse(row.record) as McpBinding) : undefined;
  }
}
