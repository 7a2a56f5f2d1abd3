/** The operations of a path item, as OpenAPI names them. */
const METHODS = new Set(['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace']);

type Json = Record<string, unknown>;

function isRecord(v: unknown): v is Json {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/**
 * The part of a parsed OpenAPI document that the operations `select` use: their path items
 * whole, every other operation as its operationId only (so an unknown id can still be answered
 * with the list of those the document has), and the components their references reach,
 * transitively. What nothing selected uses (a broken component, a webhook, another operation's
 * body) is left out, so it cannot stop the import. Null when a reference the selection uses
 * points anywhere but into `#/components/<kind>/<name>`: the whole document is needed then.
 * Reads `doc` and shares its objects; changes nothing.
 */
export function usedPart(doc: unknown, select: readonly string[]): Json | null {
  if (!isRecord(doc) || !isRecord(doc.paths)) return null;
  const paths: Json = {};
  for (const [path, item] of Object.entries(doc.paths)) {
    if (!isRecord(item)) continue;
    const operations = Object.entries(item).filter(([k, v]) => METHODS.has(k) && isRecord(v));
    const used = operations.some(([, op]) => select.includes((op as Json).operationId as string));
    const kept: Json = used
      ? { ...item }
      : typeof item.$ref === 'string'
        ? { $ref: item.$ref }
        : {};
    for (const [method, op] of operations) {
      const id = (op as Json).operationId;
      if (typeof id === 'string' && !select.includes(id)) kept[method] = { operationId: id };
      else if (!used) delete kept[method];
    }
    paths[path] = kept;
  }
  const all = isRecord(doc.components) ? doc.components : {};
  const components: Record<string, Json> = {};
  const seen = new Set<unknown>();
  let outside = false;
  const walk = (value: unknown): void => {
    if (outside || typeof value !== 'object' || value === null || seen.has(value)) return;
    seen.add(value);
    if (Array.isArray(value)) {
      for (const v of value) walk(v);
      return;
    }
    const ref = (value as Json).$ref;
    if (typeof ref === 'string' && ref.startsWith('#')) {
      const m = /^#\/components\/([^/]+)\/([^/]+)(?:\/.*)?$/.exec(ref);
      if (!m) {
        outside = true;
        return;
      }
      const [kind, name] = [pointerToken(m[1]!), pointerToken(m[2]!)];
      const target = isRecord(all[kind]) ? all[kind][name] : undefined;
      // A reference to nothing stays, for the resolver to name.
      if (target !== undefined && components[kind]?.[name] === undefined) {
        (components[kind] ??= {})[name] = target;
        walk(target);
      }
    }
    for (const v of Object.values(value)) walk(v);
  };
  walk(paths);
  walk(doc.servers);
  if (outside) return null;
  const part: Json = { openapi: doc.openapi, info: doc.info, paths, components };
  if (doc.servers !== undefined) part.servers = doc.servers;
  return part;
}

/** A JSON pointer token of a URI fragment: %-decoded, then `~1` → `/` and `~0` → `~`. */
function pointerToken(token: string): string {
  let decoded = token;
  try {
    decoded = decodeURIComponent(token);
  } catch {
    // Not %-encoded: taken as it is.
  }
  return decoded.replace(/~1/g, '/').replace(/~0/g, '~');
}
