import type { CedarValueJson, Context, Entities, EntityUid } from '@cedar-policy/cedar-wasm/nodejs';
import type { PolicyRequest } from './policy-request.js';

/** The principal, action, resource, context and entities of one Cedar authorization call. */
interface CedarRequest {
  principal: EntityUid;
  action: EntityUid;
  resource: EntityUid;
  context: Context;
  entities: Entities;
}

const ns = 'Gatehouse';

/**
 * Builds the Cedar request of a policy request: `Agent::"<agentId>"` calls `Tool::"<toolId>"`,
 * with the tenant → project → environment hierarchy as entities and the call's facts (input
 * included, see {@link toCedarValue}) as context. Crossing into Cedar costs time per value, so
 * `include` leaves out the input (as `{}`) and the entities when the policy set reads neither.
 */
export function toCedarRequest(
  req: PolicyRequest,
  include: { input: boolean; entities: boolean } = { input: true, entities: true },
): CedarRequest {
  const input = include.input ? toCedarValue(req.input) : undefined;
  return {
    principal: { type: `${ns}::Agent`, id: req.agent.id },
    action: { type: `${ns}::Action`, id: req.action ?? 'invoke' },
    resource: { type: `${ns}::Tool`, id: req.tool.id },
    context: {
      environment: req.environment.name,
      environmentClass: req.environment.class,
      frozen: req.environment.frozen,
      effectiveClass: req.effectiveClass,
      declaredClass: req.tool.declaredClass,
      project: req.project,
      tenant: req.tenant,
      input: isRecord(input) ? input : {},
    },
    entities: include.entities ? requestEntities(req) : [],
  };
}

function requestEntities(req: PolicyRequest): Entities {
  const tenant = { type: `${ns}::Tenant`, id: req.tenant };
  const project = { type: `${ns}::Project`, id: req.project };
  return [
    { uid: tenant, attrs: {}, parents: [] },
    { uid: project, attrs: {}, parents: [tenant] },
    {
      uid: { type: `${ns}::Environment`, id: req.environment.name },
      attrs: { class: req.environment.class, frozen: req.environment.frozen },
      parents: [project],
    },
    {
      uid: { type: `${ns}::Agent`, id: req.agent.id },
      attrs: { release: `${req.agent.id}@${req.agent.version}`, agentId: req.agent.id },
      parents: [],
    },
    {
      uid: { type: `${ns}::Tool`, id: req.tool.id },
      attrs: {
        toolId: req.tool.id,
        version: req.tool.version,
        kind: req.tool.kind,
        declaredClass: req.tool.declaredClass,
      },
      parents: [],
    },
  ];
}

/**
 * A JSON value as a Cedar value that means the same to a policy:
 * - `null` (and `undefined`) members and elements are left out, so `has` is false for them;
 * - integers within ±2^53 stay numbers (Cedar Long); other numbers become their JSON text, so a
 *   numeric comparison on them fails to evaluate instead of silently not matching;
 * - arrays become sets; object members named `__entity`, `__extn` or `__expr` are left out, since
 *   Cedar would read them as escapes (an input must not be able to forge an entity reference).
 * Returns undefined for a value that has no Cedar form (null, a function).
 */
function toCedarValue(value: unknown): CedarValueJson | undefined {
  switch (typeof value) {
    case 'string':
    case 'boolean':
      return value;
    case 'number':
      return Number.isSafeInteger(value) ? value : JSON.stringify(value);
    case 'bigint':
      return value.toString();
    case 'object': {
      if (value === null) return undefined;
      if (Array.isArray(value)) {
        return value.map(toCedarValue).filter((v): v is CedarValueJson => v !== undefined);
      }
      const out: Record<string, CedarValueJson> = {};
      for (const [key, member] of Object.entries(value)) {
        if (key === '__entity' || key === '__extn' || key === '__expr') continue;
        const converted = toCedarValue(member);
        if (converted !== undefined) out[key] = converted;
      }
      return out;
    }
    default:
      return undefined;
  }
}

function isRecord(v: CedarValueJson | undefined): v is { [key: string]: CedarValueJson } {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
