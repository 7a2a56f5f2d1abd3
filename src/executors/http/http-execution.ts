import { exactOrigin, parseJsonPointer } from '../../core/index.js';
import { headerOrigin } from '../../secrets/index.js';
import type { CredentialInjection } from '../../secrets/index.js';
import type { ToolDescriptor } from '../../tools/index.js';
import { hasDotSegment } from './dot-segment.js';
import { schemaCanHave } from './schema-reach.js';

/** HTTP methods an `http` descriptor may use. */
export const HttpMethod = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'] as const;
export type HttpMethod = (typeof HttpMethod)[number];

/** Statuses that mean "refused, nothing happened" when a descriptor declares none. */
export const DEFAULT_FAILURE_STATUSES: readonly number[] = [400, 401, 403, 404, 405, 409, 415, 422];

/** The execution config of an `http` descriptor. */
export interface HttpExecution {
  method: HttpMethod;
  /**
   * An RFC 6570 URL template (`https://api.example.com/tickets/{id}{?state}`); its variables are
   * members of the input. The scheme, host and port are fixed: no variable before the path.
   */
  url: string;
  /** Request header name → JSON pointer of the input value sent in it (absent value: not sent). */
  headers?: Record<string, string>;
  /** Query parameter name → JSON pointer of the input value (absent value: not sent). */
  query?: Record<string, string>;
  /** JSON pointer of the input value sent as the JSON body (`""`: the whole input). */
  body?: string;
  /** Statuses that mean "refused, nothing happened"; default {@link DEFAULT_FAILURE_STATUSES}. */
  failureStatuses?: number[];
}

/** One `{…}` expression of a URL template, and its operator and variable specs. */
const EXPRESSION = /\{([+#./;?&]?)([^{}]*)\}/g;
const VARSPEC =
  /^((?:[A-Za-z0-9_]|%[0-9A-Fa-f]{2})(?:\.?(?:[A-Za-z0-9_]|%[0-9A-Fa-f]{2}))*)(?::([1-9][0-9]{0,3})|\*)?$/;

/** Headers the executor sets itself or that frame the request: a descriptor may not set them. */
const RESERVED_HEADERS = new Set([
  'host',
  'content-length',
  'transfer-encoding',
  'connection',
  'content-type',
  'idempotency-key',
  'accept-encoding',
  'te',
  'upgrade',
  'keep-alive',
  'trailer',
  'proxy-connection',
]);

/** Whether the gateway sets or frames this header itself, so no input may set it. */
export function isReservedHeader(name: string): boolean {
  return RESERVED_HEADERS.has(name.toLowerCase());
}

const HEADER_NAME = /^[A-Za-z0-9!#$%&'*+.^_`|~-]{1,64}$/;

/**
 * An input member's name as an RFC 6570 variable name: characters outside `[A-Za-z0-9_.]`
 * %-encoded as UTF-8 (`item-id` → `item%2Did`); {@link templateVariables} decodes it back.
 */
export function templateName(name: string): string {
  return name.replace(/[^A-Za-z0-9_.]/g, (c) =>
    [...Buffer.from(c, 'utf8')]
      .map((b) => `%${b.toString(16).toUpperCase().padStart(2, '0')}`)
      .join(''),
  );
}

/** The execution config of a descriptor known to be `http`. */
export function httpExecution(d: ToolDescriptor): HttpExecution {
  return d.execution as unknown as HttpExecution;
}

/**
 * The variable names of a URL template, or why it is not one (unbalanced braces, a malformed
 * variable, a variable in the scheme, host or port).
 */
export function templateVariables(url: string): string[] | string {
  const names: string[] = [];
  const literal = url.replace(EXPRESSION, '');
  if (/[{}]/.test(literal)) return 'has an unbalanced "{" or "}"';
  const origin = /^(https?):\/\/([^/{?#]*)/.exec(url);
  if (origin === null || origin[2] === '')
    return 'must start with http:// or https:// and a host (no variable in the scheme, host or port)';
  if (url.charAt(origin[0].length) === '{' && !/^\{[/?#&]/.test(url.slice(origin[0].length)))
    return 'may not have a variable right after the host: start the path with "/" (a variable there could change the host)';
  for (const [, , specs] of url.matchAll(EXPRESSION)) {
    for (const spec of specs!.split(',')) {
      const m = VARSPEC.exec(spec);
      if (m === null) return `has a malformed variable "${spec}" (RFC 6570: name, name:N or name*)`;
      names.push(decodeURIComponent(m[1]!));
    }
  }
  try {
    new URL(url.replace(EXPRESSION, ''));
  } catch {
    return 'is not a URL once its variables are removed';
  }
  if (hasDotSegment(url.replace(EXPRESSION, 'x')))
    return 'has a "." or ".." path segment; write the path it stands for (a filled URL with one is refused)';
  return names;
}

/**
 * Why the descriptor's URL carries user info, or a header credential is bound to another origin
 * than its URL's (it would never be sent: a credential goes only to the exact origin it is bound
 * to); null when neither.
 */
function boundElsewhere(d: ToolDescriptor, template: string): string | null {
  const url = new URL(template.replace(EXPRESSION, ''));
  if (url.username !== '' || url.password !== '')
    return 'execution.url carries a user name or password; declare a brokered credential instead';
  const origin = exactOrigin(url);
  for (const [i, need] of (d.credentials ?? []).entries()) {
    const inject = need.inject as CredentialInjection | undefined;
    if (typeof inject !== 'object' || inject === null || !('header' in inject)) continue;
    const bound = headerOrigin(inject);
    if (bound !== undefined && bound !== origin)
      return `credentials/${i} is bound to ${bound}, but execution.url is at ${origin}, so it would never be sent (a host alone means https://<host>:443; name the URL's origin in "origin", or leave both out)`;
  }
  return null;
}

/**
 * Why an `http` descriptor's execution config is unusable, naming the field, or null. Every URL
 * variable and every pointer must be one the input schema can have.
 */
export function httpExecutionProblem(d: ToolDescriptor): string | null {
  const c = httpExecution(d);
  if (typeof c !== 'object' || c === null) return 'an http tool needs execution: {method, url}';
  if (!HttpMethod.includes(c.method))
    return `execution.method is ${JSON.stringify(c.method)}; it must be one of ${HttpMethod.join(', ')}`;
  if (typeof c.url !== 'string' || c.url.length > 2048)
    return 'execution.url must be a URL template (a string of at most 2048 characters)';
  const names = templateVariables(c.url);
  if (typeof names === 'string') return `execution.url ${names}`;
  const unbound = boundElsewhere(d, c.url);
  if (unbound !== null) return unbound;
  for (const name of names) {
    if (!schemaCanHave(d.inputSchema, [name]))
      return `execution.url names the variable {${name}}, which the input schema does not declare (add "${name}" to inputSchema.properties)`;
  }
  for (const field of ['headers', 'query'] as const) {
    const map = c[field];
    if (map === undefined) continue;
    if (typeof map !== 'object' || map === null || Array.isArray(map))
      return `execution.${field} must map names to JSON pointers of the input`;
    for (const [name, pointer] of Object.entries(map)) {
      const where = `execution.${field}.${name}`;
      if (field === 'headers' && !HEADER_NAME.test(name))
        return `${where}: "${name}" is not an HTTP header name`;
      if (field === 'headers' && RESERVED_HEADERS.has(name.toLowerCase()))
        return `${where}: the ${name} header is set by the gateway and may not come from the input`;
      const problem = pointerProblem(d, pointer);
      if (problem !== null) return `${where} ${problem}`;
    }
  }
  if (c.body !== undefined) {
    if (c.method === 'GET' || c.method === 'HEAD')
      return `execution.body: a ${c.method} request has no body`;
    const problem = pointerProblem(d, c.body);
    if (problem !== null) return `execution.body ${problem}`;
  }
  if (
    c.failureStatuses !== undefined &&
    !(
      Array.isArray(c.failureStatuses) &&
      c.failureStatuses.every((n) => Number.isInteger(n) && n >= 400 && n <= 599)
    )
  )
    return 'execution.failureStatuses must be a list of statuses from 400 to 599';
  const credentialHeaders = (d.credentials ?? []).flatMap((need) => {
    const inject = (need as { inject?: { header?: unknown } }).inject;
    return typeof inject?.header === 'string' ? [inject.header.toLowerCase()] : [];
  });
  const clash = Object.keys(c.headers ?? {}).find((h) =>
    credentialHeaders.includes(h.toLowerCase()),
  );
  if (clash !== undefined)
    return `execution.headers.${clash}: a credential is injected in that header; the input may not set it`;
  const extra = Object.keys(c).filter(
    (k) => !['method', 'url', 'headers', 'query', 'body', 'failureStatuses'].includes(k),
  );
  if (extra.length > 0)
    return `execution has unknown field(s) ${extra.join(', ')} (known: method, url, headers, query, body, failureStatuses)`;
  return null;
}

function pointerProblem(d: ToolDescriptor, pointer: unknown): string | null {
  if (typeof pointer !== 'string') return 'must be a JSON pointer of the input (a string)';
  const tokens = parseJsonPointer(pointer);
  if (tokens === null)
    return `is "${pointer}", not a JSON pointer (start with "/", escape "~" as ~0 and "/" as ~1)`;
  if (!schemaCanHave(d.inputSchema, tokens))
    return `is "${pointer}", which the input schema cannot have (declare it in inputSchema.properties)`;
  return null;
}
