import type { ValidateFunction } from 'ajv';
import {
  ErrorCode,
  EventType,
  GatehouseError,
  canonicalDigest,
  compareClass,
} from '../core/index.js';
import type { LedgerEntries } from '../core/index.js';
import { toolRef } from './descriptor.js';
import { agentReleaseRef } from './agent-release.js';
import { canTransitionDescriptor } from './descriptor-state.js';
import { knownVersionsText } from './known-versions.js';
import type { KnownVersion } from './known-versions.js';
import type { DescriptorState } from './descriptor-state.js';
import type { ReleaseEvent } from './release-events.js';
import type { ValidatedDescriptor } from './validate-descriptor.js';
import type { StoredAgentRelease, StoredDescriptor } from './tool-store.js';

/** What planning an event may read of the registry, for one tenant. */
interface PlanContext {
  tenant: string;
  /** ISO 8601 time of the change. */
  now: string;
  actor: string;
  tool: (id: string, version: string) => { stored: StoredDescriptor } | undefined;
  /** The published versions of a tool id, for the message that refuses an unknown one. */
  versions: (id: string) => KnownVersion[];
  release: (agentId: string, version: string) => StoredAgentRelease | undefined;
  /** Publication checks of a descriptor. @throws GatehouseError INVALID_DESCRIPTOR */
  validate: (descriptor: unknown) => ValidatedDescriptor;
}

/** What applying one release event changes, with its audit records and events. */
interface Plan {
  result: 'applied' | 'duplicate' | 'unchanged';
  message: string;
  descriptor?: StoredDescriptor;
  validateInput?: ValidateFunction;
  agentRelease?: StoredAgentRelease;
  ledger: LedgerEntries;
}

/**
 * Decides what one release event does to the registry (DESIGN §2), without changing anything:
 * the descriptor or agent release to store, the outcome, the audit record and events.
 * @throws GatehouseError INVALID_EVENT / INVALID_DESCRIPTOR / CONFLICT when it is refused.
 */
export function planReleaseEvent(e: ReleaseEvent, c: PlanContext): Plan {
  const { tenant, now, actor } = c;
  const ledger = (
    type: string,
    subject: string,
    data: Record<string, unknown>,
    eventType?: EventType,
  ): LedgerEntries => ({
    audit: [{ tenant, type, subject, at: now, actor, data: { eventId: e.id, ...data } }],
    events: eventType ? [{ type: eventType, tenant, subject, at: now, data }] : [],
  });
  switch (e.type) {
    case 'AssetReleasePublished': {
      const { assetId, version } = e.data;
      const v = c.validate(e.data.descriptor);
      if (v.descriptor.id !== assetId || v.descriptor.version !== version) {
        throw new GatehouseError(
          ErrorCode.INVALID_EVENT,
          `Event ${JSON.stringify(e.id)} publishes ${assetId}@${version} but its descriptor says ${toolRef(v.descriptor)}; they must match.`,
          { details: { pointer: '/data/descriptor/id' } },
        );
      }
      const existing = c.tool(assetId, version);
      const subject = `tool/${assetId}@${version}`;
      if (existing) {
        if (existing.stored.digest !== v.digest) {
          throw new GatehouseError(
            ErrorCode.CONFLICT,
            `${assetId}@${version} is already published with another descriptor (digest ${existing.stored.digest}); descriptors are immutable, publish a new version.`,
          );
        }
        return {
          result: 'unchanged',
          message: `${assetId}@${version} already published (${existing.stored.state})`,
          ledger: ledger('descriptor.republished', subject, { digest: v.digest }),
        };
      }
      const descriptor: StoredDescriptor = {
        tenant,
        descriptor: v.descriptor,
        digest: v.digest,
        state: 'active',
        inFlightPolicy: e.data.inFlightPolicy ?? 'finish',
        stateReason: null,
        publishedAt: now,
        updatedAt: now,
      };
      return {
        result: 'applied',
        message: `${assetId}@${version} is active`,
        descriptor,
        validateInput: v.validateInput,
        ledger: ledger(
          'descriptor.activated',
          subject,
          { digest: v.digest, class: v.descriptor.sideEffect.class, kind: v.descriptor.kind },
          EventType.DescriptorActivated,
        ),
      };
    }
    case 'AssetReleaseDeprecated':
    case 'AssetReleaseRevoked': {
      const { assetId, version } = e.data;
      const to: DescriptorState = e.type === 'AssetReleaseDeprecated' ? 'deprecated' : 'revoked';
      const existing = c.tool(assetId, version);
      if (!existing) {
        throw new GatehouseError(
          ErrorCode.CONFLICT,
          `${assetId}@${version} has not been published in tenant ${tenant}, so it cannot be ${to}; publish it first (events of one asset apply in order).`,
        );
      }
      const from = existing.stored.state;
      const subject = `tool/${assetId}@${version}`;
      if (from === to) {
        return {
          result: 'unchanged',
          message: `${assetId}@${version} is already ${to}`,
          ledger: ledger(`descriptor.${to}.repeated`, subject, {}),
        };
      }
      if (!canTransitionDescriptor(from, to)) {
        throw new GatehouseError(
          ErrorCode.CONFLICT,
          `${assetId}@${version} is ${from}; it cannot become ${to}.`,
        );
      }
      const reason = e.data.reason ?? null;
      return {
        result: 'applied',
        message: `${assetId}@${version} is ${to}`,
        descriptor: { ...existing.stored, state: to, stateReason: reason, updatedAt: now },
        ledger: ledger(
          `descriptor.${to}`,
          subject,
          { from, to, reason, inFlightPolicy: existing.stored.inFlightPolicy },
          EventType.DescriptorRetired,
        ),
      };
    }
    case 'AgentReleasePublished': {
      const { agentId, version, closure, policy, mcp } = e.data;
      const problems: string[] = [];
      closure.forEach((t, i) => {
        const found = c.tool(t.id, t.version);
        const at = `/data/closure/${i}`;
        if (!found)
          problems.push(
            `${at} ${t.id}@${t.version} is not a published tool (${knownVersionsText(t.id, c.versions(t.id))})`,
          );
        else if (found.stored.state !== 'active')
          problems.push(`${at} ${t.id}@${t.version} is ${found.stored.state}`);
        else if (compareClass(found.stored.descriptor.sideEffect.class, policy.maxClass) > 0) {
          problems.push(
            `${at} ${t.id}@${t.version} declares class ${found.stored.descriptor.sideEffect.class}, above the release's maxClass ${policy.maxClass}`,
          );
        }
      });
      if (problems.length > 0) {
        throw new GatehouseError(
          ErrorCode.INVALID_EVENT,
          `Agent release ${agentId}@${version} is rejected: ${problems.join('; ')}.`,
          { details: { problems } },
        );
      }
      // Absent when not set, so releases published before the field keep their digests.
      const release = { agentId, version, closure, policy, ...(mcp ? { mcp } : {}) };
      const digest = canonicalDigest(release);
      const existing = c.release(agentId, version);
      const subject = `agent/${agentReleaseRef(release)}`;
      if (existing) {
        if (existing.digest !== digest) {
          throw new GatehouseError(
            ErrorCode.CONFLICT,
            `Agent release ${agentReleaseRef(release)} is already published with another closure or policy; publish a new version.`,
          );
        }
        return {
          result: 'unchanged',
          message: `${agentReleaseRef(release)} already published`,
          ledger: ledger('agent-release.republished', subject, { digest }),
        };
      }
      return {
        result: 'applied',
        message: `${agentReleaseRef(release)} is published with ${closure.length} tools`,
        agentRelease: { tenant, release, digest, publishedAt: now },
        ledger: ledger('agent-release.published', subject, {
          digest,
          closure,
          maxClass: policy.maxClass,
        }),
      };
    }
  }
}
