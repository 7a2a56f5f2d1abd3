import type { ValidateFunction } from 'ajv';
import { ErrorCode, GatehouseError, KeyedSerial, canonicalDigest, isoTime } from '../core/index.js';
import type { Clock } from '../core/index.js';
import type { JsonSchemaValidator } from './json-schema.js';
import { ReleaseEventParser } from './release-events.js';
import type { InFlightPolicy, ReleaseEvent } from './release-events.js';
import { compileDescriptorShape, compileInput, validateDescriptor } from './validate-descriptor.js';
import { planReleaseEvent } from './plan-release-event.js';
import type { ExecutionCheck, InputCheck } from './validate-descriptor.js';
import type {
  AppliedEvent,
  StoredAgentRelease,
  StoredDescriptor,
  ToolStore,
  ToolStoreChange,
} from './tool-store.js';

/** A descriptor ready for the pipeline: as stored, plus its compiled input schema. */
export interface RegisteredTool {
  stored: StoredDescriptor;
  validateInput: ValidateFunction;
}

/** What applying one event did. */
export interface EventOutcome {
  id: string;
  type: ReleaseEvent['type'];
  /** `applied` changed the registry; `duplicate` was already applied; `unchanged` was a no-op. */
  result: 'applied' | 'duplicate' | 'unchanged';
  message: string;
}

/** Told when a descriptor version is revoked, after the revocation is stored. */
export type RevocationListener = (revoked: {
  tenant: string;
  tool: { id: string; version: string };
  inFlightPolicy: InFlightPolicy;
  reason: string;
  actor: string;
}) => Promise<void>;

/** Options of {@link ToolRegistry.open}. */
export interface ToolRegistryOptions {
  store: ToolStore;
  clock: Clock;
  schemas: JsonSchemaValidator;
  /** Whether this gateway can run a descriptor (its kind has an executor, its handler exists). */
  canExecute: ExecutionCheck;
  /** What executors check of a call's input beyond its schema (a browser tool's steps). */
  inputCheck?: InputCheck;
}

const key = (tenant: string, id: string, version: string) => `${tenant}\u0000${id}\u0000${version}`;

/**
 * The registry of versioned descriptors and agent releases, fed by release events (DESIGN §2).
 * Reads are synchronous from memory (the pipeline's hot path); writes go through the store first.
 */
export class ToolRegistry {
  private readonly tools = new Map<string, RegisteredTool>();
  private readonly releases = new Map<string, StoredAgentRelease>();
  private readonly perTenant = new KeyedSerial();
  private readonly revocationListeners: RevocationListener[] = [];
  private readonly parser: ReleaseEventParser;
  private readonly shape: ValidateFunction;

  private constructor(private readonly options: ToolRegistryOptions) {
    this.parser = new ReleaseEventParser(options.schemas);
    this.shape = compileDescriptorShape(options.schemas);
  }

  /** Loads every stored descriptor and release. */
  static async open(options: ToolRegistryOptions): Promise<ToolRegistry> {
    const registry = new ToolRegistry(options);
    const { descriptors, agentReleases } = await options.store.loadAll();
    for (const d of descriptors) {
      const { id, version } = d.descriptor;
      registry.tools.set(key(d.tenant, id, version), {
        stored: d,
        validateInput: compileInput(options.schemas, d.descriptor, options.inputCheck),
      });
    }
    for (const r of agentReleases) {
      registry.releases.set(key(r.tenant, r.release.agentId, r.release.version), r);
    }
    return registry;
  }

  /** Registers a listener for revocations (the in-flight policy acts through it). */
  onRevoked(listener: RevocationListener): void {
    this.revocationListeners.push(listener);
  }

  /** The descriptor version, in any state, or undefined. */
  tool(tenant: string, id: string, version: string): RegisteredTool | undefined {
    return this.tools.get(key(tenant, id, version));
  }

  /** The agent release, or undefined. */
  agentRelease(tenant: string, agentId: string, version: string): StoredAgentRelease | undefined {
    return this.releases.get(key(tenant, agentId, version));
  }

  /** The versions of one tool id in a tenant, in the order they were published, with their states. */
  versions(tenant: string, id: string): { version: string; state: StoredDescriptor['state'] }[] {
    return this.list(tenant)
      .filter((d) => d.descriptor.id === id)
      .map((d) => ({ version: d.descriptor.version, state: d.state }));
  }

  /** Every agent release of a tenant, sorted by agent id then publication. */
  agentReleases(tenant: string): StoredAgentRelease[] {
    return [...this.releases.values()]
      .filter((r) => r.tenant === tenant)
      .sort(
        (a, b) =>
          a.release.agentId.localeCompare(b.release.agentId) ||
          a.publishedAt.localeCompare(b.publishedAt),
      );
  }

  /** Every descriptor version of a tenant, sorted by id then publication. */
  list(tenant: string): StoredDescriptor[] {
    const prefix = `${tenant}\u0000`;
    return [...this.tools.entries()]
      .filter(([k]) => k.startsWith(prefix))
      .map(([, t]) => t.stored)
      .sort(
        (a, b) =>
          a.descriptor.id.localeCompare(b.descriptor.id) ||
          a.publishedAt.localeCompare(b.publishedAt),
      );
  }

  /**
   * Parses and applies release events in order, each atomically with its audit record.
   * Every event is checked for shape before any is applied; the first event refused stops the
   * batch, and the error's details list the ids applied before it.
   * @throws GatehouseError INVALID_EVENT / INVALID_DESCRIPTOR (malformed or refused),
   * CONFLICT (an id reused with other content, an immutable version changed, out of order).
   */
  async applyEvents(tenant: string, values: unknown[], actor: string): Promise<EventOutcome[]> {
    const events = values.map((v, i) => this.parser.parse(v, values.length > 1 ? `/${i}` : ''));
    for (const e of events) {
      if (e.tenant !== undefined && e.tenant !== tenant) {
        throw new GatehouseError(
          ErrorCode.FORBIDDEN,
          `Event ${JSON.stringify(e.id)} names tenant ${JSON.stringify(e.tenant)}, but you publish for tenant ${JSON.stringify(tenant)}.`,
        );
      }
    }
    const outcomes: EventOutcome[] = [];
    for (const e of events) {
      try {
        outcomes.push(await this.serialized(tenant, () => this.applyOne(tenant, e, actor)));
      } catch (err) {
        if (err instanceof GatehouseError) err.details.applied = outcomes.map((o) => o.id);
        throw err;
      }
    }
    return outcomes;
  }

  /**
   * Checks release events as {@link applyEvents} would apply them now, changing nothing: for a
   * caller that must not act (e.g. store a binding) unless the publication it is about to make will
   * be taken. Applying may still refuse what changed in between.
   * @throws as {@link applyEvents}, for the first event it would refuse.
   */
  async checkEvents(tenant: string, values: unknown[], actor: string): Promise<void> {
    const now = isoTime(this.options.clock.now());
    for (const [i, v] of values.entries()) {
      const e = this.parser.parse(v, values.length > 1 ? `/${i}` : '');
      const seen = await this.options.store.findEvent(tenant, e.id);
      if (seen && seen.digest !== canonicalDigest(e)) {
        throw new GatehouseError(
          ErrorCode.CONFLICT,
          `Event id ${JSON.stringify(e.id)} was already applied with different content; give a new event a new id.`,
        );
      }
      if (!seen) this.plan(tenant, e, actor, now);
    }
  }

  /** What applying `e` now would change (nothing is changed). @throws as planReleaseEvent. */
  private plan(tenant: string, e: ReleaseEvent, actor: string, now: string) {
    return planReleaseEvent(e, {
      tenant,
      now,
      actor,
      tool: (id, version) => this.tools.get(key(tenant, id, version)),
      versions: (id) => this.versions(tenant, id),
      release: (agentId, version) => this.releases.get(key(tenant, agentId, version)),
      validate: (d) =>
        validateDescriptor(
          d,
          this.options.schemas,
          this.shape,
          this.options.canExecute,
          '/data/descriptor',
          this.options.inputCheck,
        ),
    });
  }

  /**
   * Runs `fn` after every earlier event of the tenant: events apply one at a time per tenant,
   * which keeps them in order per asset and makes the check-then-insert of an event id race-free.
   */
  private serialized<T>(tenant: string, fn: () => Promise<T>): Promise<T> {
    return this.perTenant.run(tenant, fn);
  }

  private async applyOne(tenant: string, e: ReleaseEvent, actor: string): Promise<EventOutcome> {
    const digest = canonicalDigest(e);
    const asset = assetOf(e);
    const seen = await this.options.store.findEvent(tenant, e.id);
    if (seen) {
      if (seen.digest !== digest) {
        throw new GatehouseError(
          ErrorCode.CONFLICT,
          `Event id ${JSON.stringify(e.id)} was already applied with different content; give a new event a new id.`,
        );
      }
      return { id: e.id, type: e.type, result: 'duplicate', message: 'already applied' };
    }
    if (e.sequence !== undefined) {
      const last = await this.options.store.lastSequence(tenant, asset);
      if (last !== undefined && e.sequence <= last) {
        throw new GatehouseError(
          ErrorCode.CONFLICT,
          `Event ${JSON.stringify(e.id)} has sequence ${e.sequence} for ${asset}, but sequence ${last} was already applied: events of one asset apply in order.`,
        );
      }
    }
    const now = isoTime(this.options.clock.now());
    const event: AppliedEvent = {
      tenant,
      eventId: e.id,
      type: e.type,
      asset,
      sequence: e.sequence ?? null,
      digest,
      appliedAt: now,
    };
    const plan = this.plan(tenant, e, actor, now);
    const change: ToolStoreChange = { event, ledger: plan.ledger };
    if (plan.descriptor) change.descriptor = plan.descriptor;
    if (plan.agentRelease) change.agentRelease = plan.agentRelease;
    await this.options.store.apply(change);
    if (plan.descriptor) {
      const d = plan.descriptor.descriptor;
      const current = this.tools.get(key(tenant, d.id, d.version));
      this.tools.set(key(tenant, d.id, d.version), {
        stored: plan.descriptor,
        validateInput: plan.validateInput ?? current!.validateInput,
      });
    }
    if (plan.agentRelease) {
      const r = plan.agentRelease.release;
      this.releases.set(key(tenant, r.agentId, r.version), plan.agentRelease);
    }
    if (e.type === 'AssetReleaseRevoked' && plan.result === 'applied' && plan.descriptor) {
      for (const listener of this.revocationListeners) {
        await listener({
          tenant,
          tool: { id: e.data.assetId, version: e.data.version },
          inFlightPolicy: plan.descriptor.inFlightPolicy,
          reason: e.data.reason,
          actor,
        });
      }
    }
    return { id: e.id, type: e.type, result: plan.result, message: plan.message };
  }
}

function assetOf(e: ReleaseEvent): string {
  return e.type === 'AgentReleasePublished' ? `agent/${e.data.agentId}` : `tool/${e.data.assetId}`;
}
