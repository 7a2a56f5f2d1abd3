/** The reference tokens of an RFC 6901 JSON pointer, or null when it is not one. */
export function parseJsonPointer(pointer: string): string[] | null {
  if (pointer === '') return [];
  if (!pointer.startsWith('/')) return null;
  const tokens = pointer.slice(1).split('/');
  if (tokens.some((t) => /~[^01]|~$/.test(t))) return null;
  // ~1 before ~0, so "~01" becomes "~1" and not "/".
  return tokens.map((t) => t.replace(/~1/g, '/').replace(/~0/g, '~'));
}

/**
 * The value that `tokens` (from {@link parseJsonPointer}) point at in the JSON value `doc`, or
 * undefined when there is none. Own members only; array indexes are decimal without leading zeros.
 */
export function resolveJsonPointer(doc: unknown, tokens: readonly string[]): unknown {
  let current: unknown = doc;
  for (const token of tokens) {
    if (Array.isArray(current)) {
      if (!/^(0|[1-9][0-9]*)$/.test(token)) return undefined;
      current = current[Number(token)];
    } else if (typeof current === 'object' && current !== null && Object.hasOwn(current, token)) {
      current = (current as Record<string, unknown>)[token];
    } else {
      return undefined;
    }
  }
  return current;
}

/** Deep equality of two JSON values: arrays in order, objects by their members in any order. */
export function jsonEquals(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  if (Array.isArray(a) || Array.isArray(b)) {
    return (
      Array.isArray(a) &&
      Array.isArray(b) &&
      a.length === b.length &&
      a.every((v, i) => jsonEquals(v, b[i]))
    );
  }
  const ka = Object.keys(a);
  const kb = Object.keys(b);
  return (
    ka.length === kb.length &&
    ka.every(
      (k) =>
        Object.hasOwn(b, k) &&
        jsonEquals((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k]),
    )
  );
}
