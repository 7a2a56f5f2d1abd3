import type {
  AppliedEvent,
  DescriptorState,
  InFlightPolicy,
  StoredAgentRelease,
  StoredDescriptor,
} from '../../tools/index.js';
import type { Tables } from '../schema/tables.js';

/** A stored descriptor from its row. */
export function toStoredDescriptor(r: Tables['descriptors']): StoredDescriptor {
  return {
    tenant: r.tenant,
    descriptor: JSON.parse(r.descriptor) as StoredDescriptor['descriptor'],
    digest: r.digest,
    state: r.state as DescriptorState,
    inFlightPolicy: r.in_flight_policy as InFlightPolicy,
    stateReason: r.state_reason,
    publishedAt: r.published_at,
    updatedAt: r.updated_at,
  };
}

/** The row of a stored descriptor. */
export function descriptorRow(d: StoredDescriptor): Tables['descriptors'] {
  return {
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
}

/** A stored agent release from its row. */
export function toStoredAgentRelease(r: Tables['agent_releases']): StoredAgentRelease {
  return {
    tenant: r.tenant,
    release: JSON.parse(r.release) as StoredAgentRelease['release'],
    digest: r.digest,
    publishedAt: r.published_at,
  };
}

/** The row of a stored agent release. */
export function agentReleaseRow(r: StoredAgentRelease): Tables['agent_releases'] {
  return {
    tenant: r.tenant,
    agent_id: r.release.agentId,
    version: r.release.version,
    release: JSON.stringify(r.release),
    digest: r.digest,
    published_at: r.publishedAt,
  };
}

/** An applied release event from its row. */
export function toAppliedEvent(r: Tables['applied_events']): AppliedEvent {
  return {
    tenant: r.tenant,
    eventId: r.event_id,
    type: r.type,
    asset: r.asset,
    sequence: r.sequence === null ? null : Number(r.sequence),
    digest: r.digest,
    appliedAt: r.applied_at,
  };
}

/** The row of an applied release event. */
export function appliedEventRow(e: AppliedEvent): Tables['applied_events'] {
  return {
    tenant: e.tenant,
    event_id: e.eventId,
    type: e.type,
    asset: e.asset,
    sequence: e.sequence,
    digest: e.digest,
    applied_at: e.appliedAt,
  };
}
