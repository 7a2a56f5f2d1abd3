import type { LedgerEntries } from '../../core/index.js';
import type {
  Discovery,
  McpBinding,
  McpServerRecord,
  McpServerState,
  McpStore,
  McpStoreChange,
} from '../../mcp/index.js';
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
      this.db.run(
        this.db.kysely.insertInto('mcp_servers').values({
          id: server.id,
          tenant: server.tenant,
          name: server.name,
          identity: server.identity,
          state: server.state,
          version: server.version,
          record: JSON.stringify(server),
          created_at: server.createdAt,
          updated_at: server.updatedAt,
        }),
      );
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
            .set({
              name: s.name,
              state: s.state,
              version: s.version,
              record: JSON.stringify(s),
              updated_at: s.updatedAt,
            })
            .where('id', '=', change.serverId)
            .where('tenant', '=', change.tenant)
            .where('version', '=', s.version - 1),
        ).changes;
        if (changed !== 1) return false;
      }
      const d = change.discovery;
      if (d) {
        this.db.run(
          k
            .insertInto('mcp_discoveries')
            .values({
              server_id: change.serverId,
              tenant: change.tenant,
              record: JSON.stringify(d),
              discovered_at: d.at,
            })
            .onConflict((oc) =>
              oc
                .column('server_id')
                .doUpdateSet({ record: JSON.stringify(d), discovered_at: d.at }),
            ),
        );
      }
      for (const b of change.bindings ?? []) {
        this.db.run(
          k
            .insertInto('mcp_bindings')
            .values({
              server_id: change.serverId,
              tool: b.tool,
              tenant: change.tenant,
              state: b.state,
              record: JSON.stringify(b),
              updated_at: b.at,
            })
            .onConflict((oc) =>
              oc
                .columns(['server_id', 'tool'])
                .doUpdateSet({ state: b.state, record: JSON.stringify(b), updated_at: b.at }),
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
