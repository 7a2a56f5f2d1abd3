import type {
  AppliedEvent,
  StoredAgentRelease,
  StoredDescriptor,
  ToolStore,
  ToolStoreChange,
} from '../../tools/index.js';
import {
  agentReleaseRow,
  appliedEventRow,
  descriptorRow,
  toAppliedEvent,
  toStoredAgentRelease,
  toStoredDescriptor,
} from '../sql/tool-rows.js';
import { appendLedger } from './sqlite-ledger.js';
import type { SqliteDatabase } from './sqlite-database.js';

/** {@link ToolStore} on SQLite. */
export class SqliteToolStore implements ToolStore {
  constructor(private readonly db: SqliteDatabase) {}

  loadAll(): Promise<{ descriptors: StoredDescriptor[]; agentReleases: StoredAgentRelease[] }> {
    const k = this.db.kysely;
    const descriptors = this.db
      .all(k.selectFrom('descriptors').selectAll().orderBy('published_at'))
      .map(toStoredDescriptor);
    const agentReleases = this.db
      .all(k.selectFrom('agent_releases').selectAll().orderBy('published_at'))
      .map(toStoredAgentRelease);
    return Promise.resolve({ descriptors, agentReleases });
  }

  findEvent(tenant: string, eventId: string): Promise<AppliedEvent | undefined> {
    const r = this.db.first(
      this.db.kysely
        .selectFrom('applied_events')
        .selectAll()
        .where('tenant', '=', tenant)
        .where('event_id', '=', eventId),
    );
    return Promise.resolve(r && toAppliedEvent(r));
  }

  lastSequence(tenant: string, asset: string): Promise<number | undefined> {
    const r = this.db.first(
      this.db.kysely
        .selectFrom('applied_events')
        .select((eb) => eb.fn.max('sequence').as('top'))
        .where('tenant', '=', tenant)
        .where('asset', '=', asset),
    );
    return Promise.resolve(r?.top === null || r?.top === undefined ? undefined : Number(r.top));
  }

  apply(change: ToolStoreChange): Promise<void> {
    const k = this.db.kysely;
    return this.db.write(() => {
      this.db.run(k.insertInto('applied_events').values(appliedEventRow(change.event)));
      const d = change.descriptor;
      if (d) {
        const row = descriptorRow(d);
        this.db.run(
          k
            .insertInto('descriptors')
            .values(row)
            .onConflict((oc) =>
              oc.columns(['tenant', 'tool_id', 'version']).doUpdateSet({
                state: row.state,
                state_reason: row.state_reason,
                updated_at: row.updated_at,
              }),
            ),
        );
      }
      const r = change.agentRelease;
      if (r) {
        this.db.run(k.insertInto('agent_releases').values(agentReleaseRow(r)));
      }
      appendLedger(this.db, change.ledger);
    });
  }
}
