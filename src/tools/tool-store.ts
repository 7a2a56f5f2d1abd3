import type { LedgerEntries } from '../core/index.js';
import type { ToolDescriptor } from './descriptor.js';
import type { DescriptorState } from './descriptor-state.js';
import type { AgentRelease } from './agent-release.js';
import type { InFlightPolicy } from './release-events.js';

/** A descriptor version as stored, with its lifecycle state. */
export interface StoredDescriptor {
  tenant: string;
  descriptor: ToolDescriptor;
  digest: string;
  state: DescriptorState;
  inFlightPolicy: InFlightPolicy;
  /** Why it was deprecated or revoked. */
  stateReason: string | null;
  publishedAt: string;
  updatedAt: string;
}

/** An agent release as stored. */
export interface StoredAgentRelease {
  tenant: string;
  release: AgentRelease;
  digest: string;
  publishedAt: string;
}

/** The record that an event was applied, kept so it is applied once. */
export interface AppliedEvent {
  tenant: string;
  eventId: string;
  type: string;
  /** `tool/<id>` or `agent/<id>`: the asset whose events are ordered. */
  asset: string;
  sequence: number | null;
  /** SHA-256 of the event's canonical JSON: the same id with other content is a conflict. */
  digest: string;
  appliedAt: string;
}

/** One applied event and everything it changes, written atomically. */
export interface ToolStoreChange {
  event: AppliedEvent;
  /** Insert or replace this descriptor version. */
  descriptor?: StoredDescriptor;
  /** Insert this agent release. */
  agentRelease?: StoredAgentRelease;
  ledger: LedgerEntries;
}

/** Persistence of descriptors, agent releases and applied release events. */
export interface ToolStore {
  /** Every descriptor and agent release of every tenant (the registry caches them). */
  loadAll(): Promise<{ descriptors: StoredDescriptor[]; agentReleases: StoredAgentRelease[] }>;
  /** The applied event with this id, if any. */
  findEvent(tenant: string, eventId: string): Promise<AppliedEvent | undefined>;
  /** The highest sequence applied for an asset, if any event of it carried one. */
  lastSequence(tenant: string, asset: string): Promise<number | undefined>;
  /**
   * Applies one change atomically with its audit records and outbox events.
   * @throws when the event id was already applied (the unique key refuses it).
   */
  apply(change: ToolStoreChange): Promise<void>;
}
