import { ErrorCode, GatehouseError, cutText } from '../core/index.js';

/** A JSON object body. @throws GatehouseError INVALID_INPUT when the body is not one. */
export function objectBody(body: unknown, what: string): Record<string, unknown> {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    throw new GatehouseError(
      ErrorCode.INVALID_INPUT,
      `The body of ${what} must be a JSON object (Content-Type: application/json).`,
    );
  }
  return body as Record<string, unknown>;
}

/**
 * A required member of a body that is itself an object, e.g. `/tool` of an invocation.
 * @param shape what it holds, as the message shows it (`{"id": …, "version": …}`)
 * @throws GatehouseError INVALID_INPUT naming its pointer and what was sent instead.
 */
export function objectMember(
  o: Record<string, unknown>,
  field: string,
  shape: string,
): Record<string, unknown> {
  const v = o[field];
  if (typeof v === 'object' && v !== null && !Array.isArray(v)) return v as Record<string, unknown>;
  const pointer = `/${field}`;
  const got =
    v === undefined
      ? 'it is missing'
      : `got ${Array.isArray(v) ? 'an array' : v === null ? 'null' : `a ${typeof v}`}`;
  throw new GatehouseError(
    ErrorCode.INVALID_INPUT,
    `${pointer} must be an object ${shape}; ${got}.`,
    { details: { pointer } },
  );
}

/** The longest string field a body may hold unless its route says otherwise (ids, names, reasons). */
export const MAX_STRING_FIELD = 256;

/**
 * A required string field of at most `max` characters, without the NUL character (no name, id or
 * label holds one, and PostgreSQL cannot store it). @throws GatehouseError INVALID_INPUT naming the
 * field's pointer.
 */
export function stringField(
  o: Record<string, unknown>,
  field: string,
  pointer = `/${field}`,
  max = MAX_STRING_FIELD,
): string {
  const v = o[field];
  if (typeof v !== 'string' || v.length === 0) {
    throw new GatehouseError(ErrorCode.INVALID_INPUT, `${pointer} must be a non-empty string.`, {
      details: { pointer },
    });
  }
  if (v.length > max) {
    throw new GatehouseError(
      ErrorCode.INVALID_INPUT,
      `${pointer} is ${v.length} characters long; it may be at most ${max}.`,
      { details: { pointer, maxLength: max } },
    );
  }
  if (v.includes('\u0000')) {
    throw new GatehouseError(
      ErrorCode.INVALID_INPUT,
      `${pointer} holds the NUL character (U+0000); remove it.`,
      { details: { pointer } },
    );
  }
  return v;
}

/**
 * The first path parameter or query value that holds the NUL character (`%00`), as an error
 * naming it; undefined when none does. No id, name or filter value holds one, and PostgreSQL
 * cannot even compare one, so such a request is refused before any route reads it.
 */
export function nulCharacterIn(params: unknown, query: unknown): GatehouseError | undefined {
  for (const [where, values] of [
    ['path parameter', params],
    ['query parameter', query],
  ] as const) {
    if (typeof values !== 'object' || values === null) continue;
    for (const [name, value] of Object.entries(values as Record<string, unknown>)) {
      const texts = Array.isArray(value) ? value : [value];
      if (texts.some((t) => typeof t === 'string' && t.includes('\u0000')))
        return new GatehouseError(
          ErrorCode.INVALID_INPUT,
          `The ${where} ${name} holds the NUL character (%00); no id, name or filter value does.`,
          { details: { [where === 'path parameter' ? 'param' : 'query']: name } },
        );
    }
  }
  return undefined;
}

/**
 * The first query parameter of `query` that the route `what` (`GET /v1/approvals`) does not take,
 * as an error naming it and those it takes; undefined when every one is declared. A parameter a
 * route would ignore (a `cursor` on a list that has no pages, a misspelt filter) is refused
 * rather than answered as if it had been applied.
 */
export function undeclaredQueryParameter(
  query: unknown,
  declared: readonly string[],
  what: string,
): GatehouseError | undefined {
  if (typeof query !== 'object' || query === null) return undefined;
  const name = Object.keys(query).find((n) => !declared.includes(n));
  if (name === undefined) return undefined;
  const takes =
    declared.length === 0 ? 'it takes no query parameters' : `it takes ${declared.join(', ')}`;
  return new GatehouseError(
    ErrorCode.INVALID_INPUT,
    `Query parameter ${cutText(name, 100)} is not one ${what} takes; ${takes}. Leave it out.`,
    { details: { parameter: cutText(name, 100) } },
  );
}

/**
 * The longest reason a person writes on a decision: approving or rejecting an approval, revoking
 * a token, retiring an MCP server (the Studio's reason boxes stop at this length or less).
 */
export const MAX_REASON_FIELD = 2000;

/** The longest the evidence of a resolution may be, as JSON text (a note, links, ids). */
export const MAX_EVIDENCE_JSON = 16_000;

/**
 * An optional free-text field (a reason, a comment): undefined when absent or null, else a string
 * of at most `max` characters (empty allowed) without the NUL character.
 * @throws GatehouseError INVALID_INPUT naming the field's pointer (and `details.maxLength`).
 */
export function optionalText(
  o: Record<string, unknown>,
  field: string,
  max = MAX_REASON_FIELD,
): string | undefined {
  const v = o[field];
  if (v === undefined || v === null) return undefined;
  const pointer = `/${field}`;
  if (typeof v !== 'string')
    throw new GatehouseError(ErrorCode.INVALID_INPUT, `${pointer} must be a string.`, {
      details: { pointer },
    });
  if (v === '') return v;
  return stringField(o, field, pointer, max);
}

/**
 * A required JSON member bounded by the length of its JSON text, e.g. a resolution's `evidence`.
 * @throws GatehouseError INVALID_INPUT naming the pointer and the bound (`details.maxLength`).
 */
export function boundedJsonMember(o: Record<string, unknown>, field: string, max: number): unknown {
  const v = o[field];
  const pointer = `/${field}`;
  if (v === undefined)
    throw new GatehouseError(ErrorCode.INVALID_INPUT, `${pointer} is required.`, {
      details: { pointer },
    });
  const length = JSON.stringify(v).length;
  if (length > max)
    throw new GatehouseError(
      ErrorCode.INVALID_INPUT,
      `${pointer} is ${length} characters long as JSON; it may be at most ${max}. Keep the evidence itself elsewhere and link to it.`,
      { details: { pointer, maxLength: max } },
    );
  return v;
}

/** An optional string field (of at most `max` characters). */
export function optionalString(
  o: Record<string, unknown>,
  field: string,
  max = MAX_STRING_FIELD,
): string | undefined {
  if (o[field] === undefined || o[field] === null) return undefined;
  return stringField(o, field, `/${field}`, max);
}

/** Where a request carries a value: its query, its path or a header. */
export type ParamSource = 'query' | 'path' | 'header';

const SOURCE_NAME: Record<ParamSource, string> = {
  query: 'Query parameter',
  path: 'Path parameter',
  header: 'Header',
};

/**
 * A non-negative integer parameter (of the query, unless `source` says the path or a header), or
 * `fallback` when absent. @throws GatehouseError INVALID_INPUT naming where it was and what it must
 * be, with `details.parameter` (`details.header` for a header).
 */
export function intParam(
  value: unknown,
  name: string,
  fallback?: number,
  source: ParamSource = 'query',
): number {
  const details = source === 'header' ? { header: name } : { parameter: name };
  if (value === undefined || value === '') {
    if (fallback !== undefined) return fallback;
    throw new GatehouseError(
      ErrorCode.INVALID_INPUT,
      `${SOURCE_NAME[source]} ${name} is required (a non-negative integer).`,
      { details },
    );
  }
  const n = typeof value === 'string' && /^\d+$/.test(value) ? Number(value) : NaN;
  if (!Number.isSafeInteger(n)) {
    const shown = JSON.stringify(value);
    throw new GatehouseError(
      ErrorCode.INVALID_INPUT,
      `${SOURCE_NAME[source]} ${name} must be a non-negative integer (at most ${Number.MAX_SAFE_INTEGER}); got ${shown.length > 80 ? `${shown.slice(0, 80)}…` : shown}.`,
      { details },
    );
  }
  return n;
}

/** An idempotency key: 1–255 printable ASCII characters without spaces. */
export const IDEMPOTENCY_KEY = /^[\x21-\x7e]{1,255}$/;
