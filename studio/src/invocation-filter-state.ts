/**
 * The Invocations page's filters, kept in its URL (so a filtered list can be shared and reloaded)
 * under the names `GET /v1/invocations` takes, and the conversions between the URL, the form's
 * inputs and the API.
 */

/** The filters, in the order the form shows them. */
export const FILTER_KEYS = [
  'status',
  'tool',
  'toolVersion',
  'agent',
  'environment',
  'from',
  'to',
] as const;

/** One filter's name. */
export type FilterKey = (typeof FILTER_KEYS)[number];

/** The filters set (an absent one matches everything). */
export type Filters = Partial<Record<FilterKey, string>>;

/** The filters a URL's query holds (unknown names and empty values left out). */
export function filtersOf(query: Record<string, string | undefined>): Filters {
  const out: Filters = {};
  for (const k of FILTER_KEYS) {
    const v = query[k]?.trim();
    if (v) out[k] = v;
  }
  return out;
}

function queryString(filters: Filters, extra: Record<string, string | undefined>): string {
  const q = new URLSearchParams();
  for (const k of FILTER_KEYS) if (filters[k]) q.set(k, filters[k]);
  for (const [k, v] of Object.entries(extra)) if (v !== undefined) q.set(k, v);
  const s = q.toString();
  return s === '' ? '' : `?${s}`;
}

/** The page of the list these filters give (`cursor`: the page after it). */
export function pagePath(filters: Filters, cursor?: string): string {
  return `/studio/invocations${queryString(filters, { cursor })}`;
}

/** The API request of one page of `limit`. */
export function listPath(filters: Filters, limit: number, cursor?: string): string {
  return `/v1/invocations${queryString(filters, { limit: String(limit), cursor })}`;
}

const pad = (n: number) => String(n).padStart(2, '0');

/**
 * An instant as a `datetime-local` input shows it: this browser's local time, to the minute;
 * '' for no or an unreadable instant.
 */
export function localInput(iso: string | undefined): string {
  const ms = iso === undefined ? NaN : Date.parse(iso);
  if (!Number.isFinite(ms)) return '';
  const d = new Date(ms);
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}T${pad(d.getHours())}:${pad(d.getMinutes())}`;
}

/** A `datetime-local` input's value (local time) as the instant the API takes; undefined if empty. */
export function fromLocalInput(value: string): string | undefined {
  if (value === '') return undefined;
  const ms = new Date(value).getTime();
  return Number.isFinite(ms) ? new Date(ms).toISOString() : undefined;
}
