import { createHash } from 'node:crypto';
import { parseTemplate } from 'url-template';
import type { PrimitiveValue } from 'url-template';
import { parseJsonPointer, resolveJsonPointer } from '../../core/index.js';
import { hasDotSegment } from './dot-segment.js';
import { templateName } from './http-execution.js';
import type { HttpExecution } from './http-execution.js';

/** The request an `http` call sends, before credentials. */
export interface HttpRequestPlan {
  url: URL;
  method: string;
  headers: Record<string, string>;
  /** The JSON body's text, if any. */
  body?: string;
}

type TemplateValue =
  PrimitiveValue | PrimitiveValue[] | Record<string, PrimitiveValue | PrimitiveValue[]>;

/**
 * Fills an `http` descriptor's request from the (validated) input: the URL template (RFC 6570,
 * `url-template`), query parameters, headers and the JSON body from their pointers.
 * @throws Error saying which value is unusable (the call then fails before any effect).
 */
export function planHttpRequest(c: HttpExecution, input: unknown): HttpRequestPlan {
  const context: Record<string, TemplateValue> = {};
  if (typeof input === 'object' && input !== null && !Array.isArray(input)) {
    for (const [k, v] of Object.entries(input)) {
      const value = templateValue(v);
      // url-template looks variables up by their spelling in the template, %-encoding and all.
      if (value !== undefined) context[templateName(k)] = value;
    }
  }
  const template = new URL(c.url.replace(/\{[^{}]*\}/g, ''));
  const filled = parseTemplate(c.url).expand(context);
  if (hasDotSegment(filled))
    throw new Error(
      'the filled URL has a "." or ".." path segment (from the input), which would leave the path the descriptor names; give a value that is not "." or ".." (in any spelling)',
    );
  const url = new URL(filled);
  if (url.origin !== template.origin)
    throw new Error(`the filled URL left the descriptor's origin ${template.origin}`);
  for (const [name, pointer] of Object.entries(c.query ?? {})) {
    const v = at(input, pointer);
    if (v === undefined || v === null) continue;
    for (const item of Array.isArray(v) ? v : [v])
      url.searchParams.append(name, scalar(item, `query parameter ${name} (${pointer})`));
  }
  const headers: Record<string, string> = {};
  for (const [name, pointer] of Object.entries(c.headers ?? {})) {
    const v = at(input, pointer);
    if (v === undefined || v === null) continue;
    const text = scalar(v, `header ${name} (${pointer})`);
    if (/[\r\n\0]/.test(text))
      throw new Error(`the header ${name} (${pointer}) holds a line break`);
    const bad = FIELD_VALUE_OUTSIDE.exec(text);
    if (bad !== null)
      throw new Error(
        `the header ${name} (${pointer}) holds U+${bad[0].codePointAt(0)!.toString(16).toUpperCase().padStart(4, '0')} at character ${bad.index + 1}, which an HTTP header cannot carry (control characters and characters beyond U+00FF are not allowed)`,
      );
    headers[name.toLowerCase()] = text;
  }
  headers.accept = headers.accept ?? 'application/json, */*;q=0.5';
  let body: string | undefined;
  if (c.body !== undefined) {
    const v = at(input, c.body);
    if (v !== undefined) {
      body = JSON.stringify(v);
      headers['content-type'] = 'application/json';
    }
  }
  return { url, method: c.method, headers, ...(body === undefined ? {} : { body }) };
}

/**
 * The `Idempotency-Key` of a write-class call: derived from the tenant, the caller's idempotency
 * key and the request hash, so every attempt of one request sends the same key and no two
 * requests (or tenants) share one.
 */
export function upstreamIdempotencyKey(tenant: string, key: string, requestHash: string): string {
  const digest = createHash('sha256').update(`${tenant}\0${key}\0${requestHash}`).digest('hex');
  return `gatehouse-${digest.slice(0, 48)}`;
}

/**
 * What an HTTP field value cannot carry (RFC 9110 §5.5): control characters other than tab, DEL,
 * and anything beyond one byte. Refused while planning, so such a value fails the call before any
 * effect instead of breaking the request as it is sent (which would make a write uncertain).
 */
// eslint-disable-next-line no-control-regex -- control characters are what it finds
const FIELD_VALUE_OUTSIDE = /[\u0000-\u0008\u000a-\u001f\u007f]|[^\u0000-\u00ff]/u;

function at(input: unknown, pointer: string): unknown {
  const tokens = parseJsonPointer(pointer);
  return tokens === null ? undefined : resolveJsonPointer(input, tokens);
}

function scalar(v: unknown, where: string): string {
  if (typeof v === 'string') return v;
  if (typeof v === 'number' || typeof v === 'boolean') return String(v);
  throw new Error(`the input value for ${where} is not a string, number or boolean`);
}

/** An input member as a template value, or undefined for what a template cannot expand. */
function templateValue(v: unknown): TemplateValue | undefined {
  const primitive = (x: unknown): x is PrimitiveValue =>
    x === null || ['string', 'number', 'boolean'].includes(typeof x);
  if (primitive(v)) return v;
  if (Array.isArray(v)) return v.every(primitive) ? v : undefined;
  if (typeof v === 'object') {
    const entries = Object.entries(v);
    return entries.every(([, x]) => primitive(x) || (Array.isArray(x) && x.every(primitive)))
      ? Object.fromEntries(entries)
      : undefined;
  }
  return undefined;
}
