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
import { appendLedger } from './postgres-ledger.js';
import type { PostgresDatabase } from './postgres-database.js';

/** {@link ToolStore} on PostgreSQL. */
export class PostgresToolStore implements ToolStore {
  constructor(private readonly db: PostgresDatabase) {}

  async loadAll(): Promise<{
    descriptors: StoredDescriptor[];
    agentReleases: StoredAgentRelease[];
  }> {
    const k = this.db.kysely;
    const descriptors = await k
      .selectFrom('descriptors')
      .selectAll()
      .orderBy('published_at')
      .execute();
    const releases = await k
      .selectFrom('agent_releases')
      .selectAll()
      .orderBy('published_at')
      .execute();
    return {
      descriptors: descriptors.map(toStoredDescriptor),
      agentReleases: releases.map(toStoredAgentRelease),
    };
  }

  async findEvent(tenant: string, eventId: string): Promise<AppliedEvent | undefined> {
    const r = await this.db.kysely
      .selectFrom('applied_events')
      .selectAll()
      .where('tenant', '=', tenant)
      .where('event_id', '=', eventId)
      .executeTakeFirst();
    return r && toAppliedEvent(r);
  }

  async lastSequence(tenant: string, asset: string): Promise<number | undefined> {
    const r = await this.db.kysely
      .selectFrom('applied_events')
      .select((eb) => eb.fn.max('sequence').as('top'))
      .where('tenant', '=', tenant)
      .where('asset', '=', asset)
      .executeTakeFirst();
    return r?.top === null || r?.top === undefined ? undefined : Number(r.top);
  }

  apply(change: ToolStoreChange): Promise<void> {
    return this.db.write(async (tx) => {
      await tx.insertInto('applied_events').values(appliedEventRow(change.event)).execute();
      if (change.descriptor) {
        const row = descriptorRow(change.descriptor);
        await tx
          .insertInto('descriptors')
          .values(row)
          .onConflict((oc) =>
            oc.columns(['tenant', 'tool_id', 'version']).doUpdateSet({
              state: row.state,
              state_reason: row.state_reason,
              updated_at: row.updated_at,
            }),
          )
          .execute();
      }
      if (change.agentRelease) {
        await tx
          .insertInto('agent_releases')
          .values(agentReleaseRow(change.agentRelease))
          .execute();
      }
      await appendLedger(tx, change.ledger);
    });
  }
}
