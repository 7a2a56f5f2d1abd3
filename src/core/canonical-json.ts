import { createHash } from 'node:crypto';

/**
 * RFC 8785 (JCS) canonical JSON text of `value`: object members sorted by the UTF-16 code units
 * of their names (JavaScript's default sort), strings and numbers as ECMAScript's `JSON.stringify`
 * writes them (which is what JCS specifies), no whitespace. `toJSON` is honoured; an `undefined`,
 * function or symbol member is left out, and in an array is `null`, as `JSON.stringify` does.
 *
 * Written here rather than taken from the `canonicalize` package: it builds the text with string
 * appends instead of a closure and a template per member, which a governed call (two records of
 * a few KiB each) feels. The RFC's vectors check it (test/core/canonical-json-vectors.test.ts).
 * @throws TypeError when `value` has no JSON form (undefined, a function, a non-finite number,
 *   a bigint).
 */
export function canonicalJson(value: unknown): string {
  const text = serialize(value);
  if (text === undefined) throw new TypeError('value has no canonical JSON form');
  return text;
}

/** The canonical text of `value`, or undefined when it has none (an absent member). */
function serialize(value: unknown): string | undefined {
  switch (typeof value) {
    case 'string':
      return JSON.stringify(value);
    case 'number':
      if (!Number.isFinite(value)) throw new TypeError(`${value} has no canonical JSON form`);
      return JSON.stringify(value);
    case 'boolean':
      return value ? 'true' : 'false';
    case 'object':
      break;
    case 'bigint':
      throw new TypeError('a bigint has no canonical JSON form');
    default:
      return undefined;
  }
  if (value === null) return 'null';
  const toJSON = (value as { toJSON?: unknown }).toJSON;
  if (typeof toJSON === 'function') return serialize((toJSON as () => unknown).call(value));
  if (Array.isArray(value)) {
    let out = '[';
    for (let i = 0; i < value.length; i++) {
      if (i > 0) out += ',';
      out += serialize(value[i]) ?? 'null';
    }
    return `${out}]`;
  }
  const object = value as Record<string, unknown>;
  const names = sortNames(Object.keys(object));
  let out = '{';
  for (const name of names) {
    const member = serialize(object[name]);
    if (member === undefined) continue;
    if (out.length > 1) out += ',';
    out += `${JSON.stringify(name)}:${member}`;
  }
  return `${out}}`;
}

/** Arrays of names up to this long are sorted by insertion (see {@link sortNames}). */
const INSERTION_SORT_MAX = 24;

/**
 * `names` sorted by UTF-16 code units, in place. A record's objects have a handful of members:
 * insertion sort does them in a third of `Array.prototype.sort`'s time and allocates nothing
 * (the built-in sort allocated about 37 KiB per governed call); longer lists take the built-in.
 */
function sortNames(names: string[]): string[] {
  if (names.length > INSERTION_SORT_MAX) return names.sort();
  for (let i = 1; i < names.length; i++) {
    const name = names[i]!;
    let j = i - 1;
    while (j >= 0 && names[j]! > name) {
      names[j + 1] = names[j]!;
      j--;
    }
    names[j + 1] = name;
  }
  return names;
}

/** UTF-8 bytes of the RFC 8785 canonical JSON of `value`. */
export function canonicalBytes(value: unknown): Buffer {
  return Buffer.from(canonicalJson(value), 'utf8');
}

/** Lowercase hex SHA-256 of `data`. */
export function sha256Hex(data: string | Uint8Array): string {
  return createHash('sha256').update(data).digest('hex');
}

/** Lowercase hex SHA-256 of the canonical JSON of `value`: the digest of descriptors and records. */
export function canonicalDigest(value: unknown): string {
  return sha256Hex(canonicalJson(value));
}
