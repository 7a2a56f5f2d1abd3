/** Keywords of OpenAPI 3.0's schema object that mean nothing to a JSON Schema validator. */
const DROPPED = new Set(['xml', 'externalDocs', 'discriminator', 'example', 'nullable']);

/** Keywords whose value is one schema. */
const ONE = new Set([
  'items',
  'not',
  'additionalProperties',
  'contains',
  'propertyNames',
  'if',
  'then',
  'else',
  'unevaluatedItems',
  'unevaluatedProperties',
]);
/** Keywords whose value is a list of schemas. */
const LIST = new Set(['allOf', 'anyOf', 'oneOf', 'prefixItems']);
/** Keywords whose value maps names to schemas. */
const MAP = new Set(['properties', 'patternProperties', 'dependentSchemas', '$defs']);

/**
 * An OpenAPI 3.0 or 3.1 schema object of a request, as a JSON Schema 2020-12 schema: `nullable`
 * becomes a `"null"` type, draft-04 boolean `exclusiveMinimum`/`exclusiveMaximum` become numbers,
 * `readOnly` properties are dropped (a client does not send them), and documentation-only
 * keywords (`xml`, `example`, `discriminator`, `externalDocs`) are left out.
 *
 * @param where where the schema is, for messages (`addPet: request body`)
 * @throws Error naming `where` when the schema still holds a `$ref` (external or circular: the
 *   document must be dereferenced and self-contained) or is a cycle of objects, and when it has
 *   more than {@link MAX_SCHEMA_NODES} subschemas
 */
export function requestSchema(schema: unknown, where: string): Record<string, unknown> {
  const budget = { left: MAX_SCHEMA_NODES };
  return convert(schema, where, new Set(), budget) as Record<string, unknown>;
}

/**
 * At most this many schema objects per converted schema: references shared many times over expand
 * when copied, and a small document must not become a huge descriptor.
 */
export const MAX_SCHEMA_NODES = 5000;

function convert(
  schema: unknown,
  where: string,
  path: Set<object>,
  budget: { left: number },
): unknown {
  if (typeof schema !== 'object' || schema === null || Array.isArray(schema)) return schema;
  if (path.has(schema)) throw new Error(`${where}: the schema is circular`);
  if (--budget.left < 0)
    throw new Error(
      `${where}: the schema has more than ${MAX_SCHEMA_NODES} subschemas once its references are resolved`,
    );
  const s = schema as Record<string, unknown>;
  if (typeof s.$ref === 'string') throw new Error(`${where}: ${unresolvedRef(s.$ref)}`);
  path.add(schema);
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(s)) {
    if (DROPPED.has(key)) continue;
    if (ONE.has(key)) out[key] = convert(value, where, path, budget);
    else if (LIST.has(key) && Array.isArray(value))
      out[key] = (value as unknown[]).map((v) => convert(v, where, path, budget));
    else if (MAP.has(key) && typeof value === 'object' && value !== null) {
      const entries = Object.entries(value as Record<string, unknown>).filter(
        ([, v]) => !(key === 'properties' && isReadOnly(v)),
      );
      out[key] = Object.fromEntries(entries.map(([k, v]) => [k, convert(v, where, path, budget)]));
    } else out[key] = value;
  }
  path.delete(schema);
  if (Array.isArray(out.required) && isRecord(s.properties)) {
    const readOnly = Object.entries(s.properties)
      .filter(([, v]) => isReadOnly(v))
      .map(([k]) => k);
    out.required = (out.required as unknown[]).filter((r) => !readOnly.includes(r as string));
    if ((out.required as unknown[]).length === 0) delete out.required;
  }
  for (const bound of ['Minimum', 'Maximum'] as const) {
    const flag = out[`exclusive${bound}`];
    if (typeof flag !== 'boolean') continue;
    const limit = out[bound.toLowerCase()];
    delete out[`exclusive${bound}`];
    if (flag && typeof limit === 'number') {
      out[`exclusive${bound}`] = limit;
      delete out[bound.toLowerCase()];
    }
  }
  if (s.nullable === true) {
    if (typeof out.type === 'string') out.type = [out.type, 'null'];
    else if (Array.isArray(out.type) && !(out.type as unknown[]).includes('null'))
      out.type = [...(out.type as unknown[]), 'null'];
    const values = out.enum as unknown[] | undefined;
    if (Array.isArray(values) && !values.includes(null)) out.enum = [...values, null];
  }
  return out;
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function isReadOnly(v: unknown): boolean {
  return isRecord(v) && v.readOnly === true;
}

/**
 * Why a `$ref` is still there after dereferenceOpenApi(): one inside the document (`#…`) stays
 * only when it would close a circle; any other points outside the document, which is not read.
 */
function unresolvedRef(ref: string): string {
  return ref.startsWith('#')
    ? `the schema is circular ($ref ${JSON.stringify(ref)} leads back to a schema that contains it), and a circular schema cannot be imported`
    : `$ref ${JSON.stringify(ref)} is not resolved (only references inside the document are followed)`;
}
