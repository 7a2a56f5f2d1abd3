import type {
  AppliedEvent,
  DescriptorState,
  InFlightPolicy,
  StoredAgentRelease,
  StoredDescriptor,
  ToolStore,
  ToolStoreChange,
} from '../../tools/index.js';
import { appendLedger } from './sqlite-ledger.js';
import type { SqliteDatabase } from './sqlite-database.js';

/** {@link ToolStore} on SQLite. */
export class SqliteToolStore implements ToolStore {
  constructor(private readonly db: SqliteDatabase) {}

  loadAll(): Promise<{ descriptors: StoredDescriptor[]; agentReleases: StoredAgentRelease[] }> {
    const k = this.db.kysely;
    const descriptors = this.db
      .all(k.selectFrom('descriptors').selectAll().orderBy('published_at'))
      .map((r): StoredDescriptor => ({
        tenant: r.tenant,
        descriptor: JSON.parse(r.descriptor) as StoredDescriptor['descriptor'],
        digest: r.digest,
        state: r.state as DescriptorState,
        inFlightPolicy: r.in_flight_policy as InFlightPolicy,
        stateReason: r.state_reason,
        publishedAt: r.published_at,
        updatedAt: r.updated_at,
      }));
    const agentReleases = this.db
      .all(k.selectFrom('agent_releases').selectAll().orderBy('published_at'))
      .map((r): StoredAgentRelease => ({
        tenant: r.tenant,
        release: JSON.parse(r.release) as StoredAgentRelease['release'],
        digest: r.digest,
        publishedAt: r.published_at,
      }));
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
    return Promise.resolve(
      r && {
        tenant: r.tenant,
        eventId: r.event_id,
        type: r.type,
        asset: r.asset,
        sequence: r.sequence === null ? null : Number(r.sequence),
        digest: r.digest,
        appliedAt: r.applied_at,
      },
    );
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
      const e = change.event;
      this.db.run(
        k.insertInto('applied_events').values({
          tenant: e.tenant,
          event_id: e.eventId,
          type: e.type,
          asset: e.asset,
          sequence: e.sequence,
          digest: e.digest,
          applied_at: e.appliedAt,
        }),
      );
      const d = change.descriptor;
      if (d) {
        const row = {
          tenant: d.tenant,
          tool_id: d.descriptor.id,
          version: d.descriptor.version,
          state: d.state,
          descriptor: JSON.stringify(d.descriptor),
          digest: d.digest,
          in_flight_policy: d.inFlightPolicy,
          state_reason: d.stateReason,
          published_at: d.publishedAt,
          updated_at: d.updatedAt,
        };
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
        this.db.run(
          k.insertInto('agent_releases').values({
            tenant: r.tenant,
            agent_id: r.release.agentId,
            version: r.release.version,
            release: JSON.stringify(r.release),
            digest: r.digest,
            published_at: r.publishedAt,
          }),
        );
      }
      appendLedger(this.db, change.ledger);
    });
  }
}
