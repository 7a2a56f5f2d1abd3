import { ErrorCode, GatehouseError } from '../core/index.js';
import { InvocationStatus } from '../invocation/index.js';
import type { InvocationQuery, InvocationStatus as Status } from '../invocation/index.js';
import { intParam } from './request-parsing.js';

const statuses = Object.values(InvocationStatus) as string[];

/** The most invocations one page holds, and how many when `limit` is not given. */
export const INVOCATION_PAGE = { max: 500, default: 50 } as const;

/** The query parameters of `GET /v1/invocations`, for its OpenAPI entry. */
export const INVOCATION_FILTER_PARAMETERS: Record<string, { type: string; description: string }> = {
  status: { type: 'string', description: `only this status: one of ${statuses.join(', ')}` },
  tool: { type: 'string', description: 'only calls of this tool id (every version)' },
  toolVersion: {
    type: 'string',
    description: 'with tool: only this version of it',
  },
  agent: { type: 'string', description: 'only calls made by this agent id' },
  environment: { type: 'string', description: 'only calls in this environment' },
  from: {
    type: 'string',
    description:
      'only calls created at or after this instant (ISO 8601 with a time zone, e.g. 2026-01-01T09:00:00Z, or a date: its midnight UTC)',
  },
  to: { type: 'string', description: 'only calls created before this instant (as from)' },
  limit: {
    type: 'integer',
    description: `at most this many (default ${INVOCATION_PAGE.default}, max ${INVOCATION_PAGE.max})`,
  },
  cursor: {
    type: 'string',
    description:
      'the nextCursor of the previous page, with the same filters: the page of older calls after it',
  },
};

/** The longest filter value accepted (ids, names and versions are shorter). */
const MAX_VALUE = 256;
/** What a cursor (the id of the last call of a page) looks like. */
const CURSOR = /^[0-9A-Za-z-]{1,64}$/;
const INSTANT =
  /^(\d{4})-(\d{2})-(\d{2})(?:[Tt](\d{2}):(\d{2})(?::(\d{2})(?:\.\d{1,9})?)?([Zz]|[+-]\d{2}:\d{2}))?$/;

/**
 * The {@link InvocationQuery} (without the caller's narrowing) that `GET /v1/invocations` asks for;
 * `limit` is the page size, `before` the cursor's boundary.
 * @throws GatehouseError INVALID_INPUT naming the parameter, what it must be and what it was.
 */
export function invocationQuery(raw: unknown): InvocationQuery {
  const q = (raw ?? {}) as Record<string, unknown>;
  for (const name of Object.keys(q)) {
    if (!Object.hasOwn(INVOCATION_FILTER_PARAMETERS, name))
      invalid(name, q[name], `is not a filter of GET /v1/invocations; use ${names()}`);
    if (Array.isArray(q[name])) invalid(name, q[name], 'is given more than once; give it once');
  }
  const text = (name: string): string | undefined => {
    const v = q[name] as string | undefined;
    if (v === undefined) return undefined;
    if (v.length === 0 || v.length > MAX_VALUE)
      invalid(name, v, `must be 1–${MAX_VALUE} characters; leave it out for every value`);
    return v;
  };
  const query: InvocationQuery = {
    limit: Math.min(INVOCATION_PAGE.max, intParam(q.limit, 'limit', INVOCATION_PAGE.default)),
  };
  const status = text('status');
  if (status !== undefined) {
    if (!statuses.includes(status))
      invalid('status', status, `must be one of ${statuses.join(', ')}`);
    query.status = status as Status;
  }
  const tool = text('tool');
  const toolVersion = text('toolVersion');
  if (toolVersion !== undefined && tool === undefined)
    invalid('toolVersion', toolVersion, 'needs tool: a version is of one tool; give tool too');
  if (tool !== undefined)
    query.tool = { id: tool, ...(toolVersion ? { version: toolVersion } : {}) };
  const agent = text('agent');
  if (agent !== undefined) query.agent = agent;
  const environment = text('environment');
  if (environment !== undefined) query.environment = environment;
  const from = instant('from', text('from'));
  const to = instant('to', text('to'));
  if (from !== undefined && to !== undefined && from > to)
    invalid('to', q.to, `is before from (${from}); give a range whose end follows its start`);
  if (from !== undefined) query.from = from;
  if (to !== undefined) query.to = to;
  const cursor = text('cursor');
  if (cursor !== undefined) {
    if (!CURSOR.test(cursor))
      invalid('cursor', cursor, 'must be the nextCursor of an earlier answer, unchanged');
    query.before = cursor;
  }
  return query;
}

/** An ISO 8601 instant (or date) as `Date.toISOString` writes it, as stored. */
function instant(name: string, v: string | undefined): string | undefined {
  if (v === undefined) return undefined;
  const m = INSTANT.exec(v);
  const bad = () =>
    invalid(
      name,
      v,
      'must be an ISO 8601 instant with a time zone (2026-01-01T09:00:00Z, 2026-01-01T10:00:00+01:00) or a date (2026-01-01, its midnight UTC)',
    );
  if (!m) return bad();
  const [, y, mo, d, h = '0', mi = '0', s = '0'] = m;
  const day = new Date(Date.UTC(Number(y), Number(mo) - 1, Number(d)));
  if (
    day.getUTCMonth() !== Number(mo) - 1 ||
    day.getUTCDate() !== Number(d) ||
    Number(h) > 23 ||
    Number(mi) > 59 ||
    Number(s) > 59
  )
    return bad();
  const at = Date.parse(m[4] === undefined ? `${v}T00:00:00Z` : v);
  if (!Number.isFinite(at)) return bad();
  const iso = new Date(at).toISOString();
  // Stored instants are years 0000–9999; a zone offset can carry one out of them.
  if (!/^\d{4}-/.test(iso)) return bad();
  return iso;
}

function names(): string {
  return Object.keys(INVOCATION_FILTER_PARAMETERS).join(', ');
}

function invalid(parameter: string, value: unknown, what: string): never {
  throw new GatehouseError(
    ErrorCode.INVALID_INPUT,
    `Query parameter ${parameter} ${what}; got ${JSON.stringify(value)}.`,
    { details: { parameter } },
  );
}
