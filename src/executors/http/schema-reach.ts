/**
 * Whether an input schema can have a value at a JSON pointer: each token must be a member the
 * schema declares (`properties`, in the schema or in one of its `allOf`/`anyOf`/`oneOf` branches),
 * or an index of an array schema. A schema that says nothing of a member cannot have it for a
 * template: a typo in a descriptor is refused at publication, not found at the first call.
 */
export function schemaCanHave(schema: unknown, tokens: readonly string[]): boolean {
  if (tokens.length === 0) return true;
  if (typeof schema !== 'object' || schema === null) return false;
  const s = schema as Record<string, unknown>;
  const [token, ...rest] = tokens as [string, ...string[]];
  const branches = ['allOf', 'anyOf', 'oneOf'].flatMap((k) =>
    Array.isArray(s[k]) ? (s[k] as unknown[]) : [],
  );
  if (branches.some((b) => schemaCanHave(b, tokens))) return true;
  const properties = s.properties;
  if (
    typeof properties === 'object' &&
    properties !== null &&
    Object.hasOwn(properties, token) &&
    schemaCanHave((properties as Record<string, unknown>)[token], rest)
  )
    return true;
  if (/^(0|[1-9][0-9]*)$/.test(token)) {
    const prefix = Array.isArray(s.prefixItems) ? (s.prefixItems as unknown[]) : [];
    const item = prefix[Number(token)] ?? s.items;
    if (item !== undefined && item !== false && schemaCanHave(item, rest)) return true;
  }
  return false;
}
