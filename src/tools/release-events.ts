import type { ValidateFunction } from 'ajv';
import { ErrorCode, GatehouseError } from '../core/index.js';
import type { SideEffectClass } from '../core/index.js';
import type { ToolDescriptor } from './descriptor.js';
import type { AgentRelease } from './agent-release.js';
import { JsonSchemaValidator } from './json-schema.js';
import type { SchemaViolation } from './json-schema.js';
import {
  agentReleasePublishedSchema,
  assetReleaseDeprecatedSchema,
  assetReleasePublishedSchema,
  assetReleaseRevokedSchema,
  eventEnvelopeSchema,
} from './event-schemas.js';

/** What to do with running calls when a release is revoked (DESIGN §2). */
export type InFlightPolicy = 'finish' | 'abort';

interface EventBase {
  /** The event id; an event is applied once per id. */
  id: string;
  /** The tenant it applies to; defaults to the publisher's. */
  tenant?: string;
  /** Optional order per asset: a lower or equal sequence than one already applied is refused. */
  sequence?: number;
  occurredAt?: string;
}

/** The release events Gatehouse consumes. */
export type ReleaseEvent =
  | (EventBase & {
      type: 'AssetReleasePublished';
      data: {
        assetId: string;
        version: string;
        descriptor: ToolDescriptor;
        inFlightPolicy?: InFlightPolicy;
      };
    })
  | (EventBase & {
      type: 'AssetReleaseDeprecated';
      data: { assetId: string; version: string; reason?: string };
    })
  | (EventBase & {
      type: 'AssetReleaseRevoked';
      data: { assetId: string; version: string; reason: string };
    })
  | (EventBase & {
      type: 'AgentReleasePublished';
      data: {
        agentId: string;
        version: string;
        closure: AgentRelease['closure'];
        policy: { maxClass: SideEffectClass };
        mcp?: AgentRelease['mcp'];
      };
    });

/** Validates the shape of release events, with every violation located by JSON pointer. */
export class ReleaseEventParser {
  private readonly envelope: ValidateFunction;
  private readonly byType: Record<ReleaseEvent['type'], ValidateFunction>;

  constructor(validator: JsonSchemaValidator) {
    this.envelope = validator.compile(eventEnvelopeSchema);
    this.byType = {
      AssetReleasePublished: validator.compile(assetReleasePublishedSchema),
      AssetReleaseDeprecated: validator.compile(assetReleaseDeprecatedSchema),
      AssetReleaseRevoked: validator.compile(assetReleaseRevokedSchema),
      AgentReleasePublished: validator.compile(agentReleasePublishedSchema),
    };
  }

  /**
   * The event, typed.
   * @throws GatehouseError INVALID_EVENT naming every violation and where it is.
   */
  parse(value: unknown, where = ''): ReleaseEvent {
    const envelopeErrors = JsonSchemaValidator.violations(this.envelope, value);
    if (envelopeErrors.length > 0) throw invalid(envelopeErrors, where);
    const event = value as ReleaseEvent;
    const dataErrors = JsonSchemaValidator.violations(this.byType[event.type], event.data);
    if (dataErrors.length > 0) {
      throw invalid(
        dataErrors.map((v) => ({ ...v, pointer: `/data${v.pointer}` })),
        where,
        event,
      );
    }
    return event;
  }
}

function invalid(
  violations: SchemaViolation[],
  where: string,
  event?: ReleaseEvent,
): GatehouseError {
  const located = violations.map((v) => ({ ...v, pointer: `${where}${v.pointer}` }));
  const list = located.map((v) => `${v.pointer || '/'} ${v.message}`).join('; ');
  const what = event ? `${event.type} event ${JSON.stringify(event.id)}` : 'event';
  return new GatehouseError(ErrorCode.INVALID_EVENT, `Invalid ${what}: ${list}.`, {
    details: { violations: located },
  });
}
