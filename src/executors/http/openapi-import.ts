import {
  ErrorCode,
  GatehouseError,
  isGatehouseError,
  isSideEffectClass,
} from '../../core/index.js';
import type { SideEffectClass } from '../../core/index.js';
import type { ToolDescriptor } from '../../tools/index.js';
import { isReservedHeader, templateName } from './http-execution.js';
import type { HttpExecution, HttpMethod } from './http-execution.js';
import { requestSchema } from './openapi-schema.js';

/** What to import from an OpenAPI document, and as what. */
export interface OpenApiImportOptions {
  /** Prefix of every tool id: `acme/tickets` makes `acme/tickets/create-ticket`. */
  idPrefix: string;
  /** The version every imported descriptor is published as. */
  version: string;
  /** The operationIds to import; at least one. */
  select: string[];
  /** operationId → declared class, overriding GET/HEAD → read, others → shared-write. */
  classes?: Record<string, string>;
  /** The base URL requests go to, instead of the document's (first) server. */
  baseUrl?: string;
}

/** The descriptors made, and what of the document they could not carry (one line each). */
export interface OpenApiImport {
  descriptors: ToolDescriptor[];
  warnings: string[];
}

interface Parameter {
  name: string;
  in: string;
  required?: boolean;
  description?: string;
  schema?: unknown;
  content?: Record<string, { schema?: unknown }>;
}

interface Operation {
  operationId?: string;
  summary?: string;
  description?: string;
  parameters?: Parameter[];
  requestBody?: { required?: boolean; description?: string; content?: Record<string, unknown> };
  servers?: Server[];
}

interface Server {
  url: string;
  variables?: Record<string, { default?: string }>;
}

interface Found {
  method: HttpMethod;
  path: string;
  operation: Operation;
  pathParameters: Parameter[];
  servers: Server[] | undefined;
}

const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch'] as const;

/** Header parameters OpenAPI says are ignored: the request's framing and credentials. */
const IGNORED_HEADERS = new Set(['accept', 'content-type', 'authorization']);

/** The property of the input that holds the JSON request body. */
const BODY = 'body';

/**
 * One `http` descriptor per selected operation of an OpenAPI 3.0/3.1 document whose references
 * are already resolved: the input schema holds the path, query and header parameters as members
 * and the JSON request body as `body`; the URL is the server URL (or `baseUrl`) and the path as an
 * RFC 6570 template; GET and HEAD are `read`, the others `shared-write` unless `classes` says
 * otherwise. Pure: reads nothing and publishes nothing.
 *
 * @throws GatehouseError `INVALID_INPUT` naming what is wrong: an operationId the document does
 *   not have (listing those it has), an unknown class, no absolute server URL, a required body
 *   that is not JSON, a parameter name used twice, an unresolved `$ref`.
 */
export function importOpenApi(document: unknown, options: OpenApiImportOptions): OpenApiImport {
  const doc = document as {
    openapi?: unknown;
    paths?: Record<string, Record<string, unknown>>;
    servers?: Server[];
  };
  if (typeof doc !== 'object' || doc === null || typeof doc.openapi !== 'string')
    fail('the document is not an OpenAPI document (it has no "openapi" version field)');
  if (!/^3\.[01]\./.test(doc.openapi))
    fail(`the document is OpenAPI ${doc.openapi}; only OpenAPI 3.0 and 3.1 are imported`);
  if (!/^[a-z0-9][a-z0-9._-]*(\/[a-z0-9][a-z0-9._-]*)*$/.test(options.idPrefix))
    fail(
      `the id prefix ${JSON.stringify(options.idPrefix)} is not a tool id: lowercase letters, digits, ".", "_", "-", in parts joined by "/" (e.g. acme/tickets)`,
    );
  if (options.select.length === 0) fail('select at least one operationId');
  const operations = operationsOf(doc.paths ?? {});
  const missing = options.select.filter((id) => !operations.has(id));
  if (missing.length > 0)
    fail(
      `the document has no operation ${missing.join(', ')}; its operationIds: ${listed([...operations.keys()])}`,
    );
  for (const [id, cls] of Object.entries(options.classes ?? {})) {
    if (!options.select.includes(id))
      fail(
        `a class is given for ${id}, which is not selected (select: ${options.select.join(', ')})`,
      );
    if (!isSideEffectClass(cls))
      fail(
        `the class of ${id} is ${JSON.stringify(cls)}; it must be one of read, workspace-write, shared-write, production`,
      );
  }
  const warnings: string[] = [];
  const chosen = [...new Set(options.select)];
  const descriptors = chosen.map((id) => {
    try {
      return descriptorOf(id, operations.get(id)!, doc.servers, options, warnings);
    } catch (e) {
      if (isGatehouseError(e)) throw e;
      // A schema problem names where it is; anything else is a part of the operation that is not
      // shaped as OpenAPI says (a parameter that is not an object, …).
      const message = e instanceof Error ? e.message : String(e);
      return fail(
        e instanceof Error && e.constructor === Error
          ? message
          : `${id}: the operation is not well-formed OpenAPI (${message})`,
      );
    }
  });
  const seenIds = new Map<string, string>();
  for (const [i, d] of descriptors.entries()) {
    const op = chosen[i]!;
    const other = seenIds.get(d.id);
    if (other !== undefined) fail(`${other} and ${op} both become the tool id ${d.id}`);
    seenIds.set(d.id, op);
  }
  return { descriptors, warnings };
}

/** Names for a message: all of them, or the first 100 and how many more. */
function listed(names: string[]): string {
  if (names.length === 0) return '(none)';
  const shown = names.slice(0, 100).join(', ');
  return names.length > 100 ? `${shown}, … and ${names.length - 100} more` : shown;
}

function fail(message: string): never {
  throw new GatehouseError(ErrorCode.INVALID_INPUT, `OpenAPI import: ${message}`);
}

/** Every operation with an operationId, by operationId, in document order. */
function operationsOf(paths: Record<string, Record<string, unknown>>): Map<string, Found> {
  const found = new Map<string, Found>();
  for (const [path, item] of Object.entries(paths)) {
    if (typeof item !== 'object' || item === null) continue;
    for (const [method, value] of Object.entries(item)) {
      if (!(METHODS as readonly string[]).includes(method)) continue;
      const operation = value as Operation | undefined;
      if (typeof operation?.operationId !== 'string') continue;
      found.set(operation.operationId, {
        method: method.toUpperCase() as HttpMethod,
        path,
        operation,
        pathParameters: (item.parameters as Parameter[] | undefined) ?? [],
        servers: item.servers as Server[] | undefined,
      });
    }
  }
  return found;
}

/** `getPetById` → `get-pet-by-id`, `list_HTTPChecks` → `list-http-checks`. */
export function kebabCase(name: string): string {
  return name
    .replace(/([a-z0-9])([A-Z])/g, '$1-$2')
    .replace(/([A-Z]+)([A-Z][a-z])/g, '$1-$2')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '');
}

function descriptorOf(
  id: string,
  found: Found,
  docServers: Server[] | undefined,
  options: OpenApiImportOptions,
  warnings: string[],
): ToolDescriptor {
  const { operation, method } = found;
  // Operation-level parameters override path-level ones of the same name and location.
  const byKey = new Map<string, Parameter>();
  for (const raw of [...list(found.pathParameters), ...list(operation.parameters)] as unknown[]) {
    const p = raw as (Partial<Parameter> & { $ref?: unknown }) | null;
    if (p?.$ref !== undefined)
      fail(
        `${id}: parameter $ref ${JSON.stringify(p.$ref)} ${typeof p.$ref === 'string' && p.$ref.startsWith('#') ? 'is circular (it leads back to itself)' : 'is not resolved'}`,
      );
    if (typeof p?.name !== 'string' || typeof p.in !== 'string')
      fail(`${id}: a parameter has no name or location ("in")`);
    byKey.set(`${p.in}:${p.name}`, p as Parameter);
  }
  const properties = new Map<string, Record<string, unknown>>();
  const required: string[] = [];
  const headers: Record<string, string> = {};
  const query: Record<string, string> = {};
  let path = found.path;
  const declared = [...byKey.values()].filter((p) => p.in === 'path').map((p) => p.name);
  const undeclared = [...found.path.matchAll(/\{([^{}]+)\}/g)]
    .map((m) => m[1]!)
    .filter((name) => !declared.includes(name));
  if (undeclared.length > 0)
    fail(
      `${id}: the path ${found.path} has {${undeclared.join('}, {')}}, which no path parameter declares`,
    );
  for (const p of byKey.values()) {
    if (!['path', 'query', 'header', 'cookie'].includes(p.in))
      fail(
        `${id}: parameter ${p.name} is "in": ${JSON.stringify(p.in)}; OpenAPI knows path, query, header and cookie`,
      );
    if (p.in === 'cookie') {
      if (p.required) fail(`${id}: the required cookie parameter ${p.name} cannot be sent`);
      warnings.push(`${id}: cookie parameter ${p.name} is left out (cookies are not sent)`);
      continue;
    }
    if (p.in === 'header' && IGNORED_HEADERS.has(p.name.toLowerCase())) continue;
    if (p.in === 'header' && isReservedHeader(p.name)) {
      warnings.push(`${id}: header parameter ${p.name} is left out (the gateway sets it itself)`);
      continue;
    }
    if (p.name === BODY && operation.requestBody !== undefined)
      fail(`${id}: a parameter is named "${BODY}", the name the request body takes in the input`);
    if (properties.has(p.name))
      fail(`${id}: two parameters are named ${p.name}; the input cannot hold both`);
    properties.set(p.name, parameterSchema(id, p));
    if (p.required || p.in === 'path') required.push(p.name);
    const pointer = `/${p.name.replace(/~/g, '~0').replace(/\//g, '~1')}`;
    if (p.in === 'header') headers[p.name] = pointer;
    else if (p.in === 'query') query[p.name] = pointer;
    else if (p.in === 'path') path = path.split(`{${p.name}}`).join(`{${templateName(p.name)}}`);
  }
  const execution: HttpExecution = {
    method,
    url: `${baseOf(id, found, docServers, options)}${path}`,
  };
  if (Object.keys(headers).length > 0) execution.headers = headers;
  if (Object.keys(query).length > 0) execution.query = query;
  const body = operation.requestBody;
  if (body !== undefined) {
    const media = Object.keys(body.content ?? {});
    const json = media.find((m) => /^application\/(.+\+)?json(;|$)/i.test(m));
    if (json === undefined) {
      if (body.required)
        fail(`${id}: its request body is ${media.join(', ')}; only JSON request bodies are sent`);
      warnings.push(
        `${id}: its optional request body (${media.join(', ')}) is left out; only JSON request bodies are sent`,
      );
    } else {
      const schema = (body.content![json] as { schema?: unknown }).schema ?? {};
      const bodySchema = requestSchema(schema, `${id}: request body`);
      properties.set(BODY, bodySchema);
      if (body.description) bodySchema.description ??= body.description;
      if (body.required) required.push(BODY);
      execution.body = `/${BODY}`;
    }
  }
  const inputSchema: Record<string, unknown> = {
    type: 'object',
    additionalProperties: false,
    properties: Object.fromEntries(properties),
  };
  if (required.length > 0) inputSchema.required = required;
  const cls =
    options.classes?.[id] ?? (method === 'GET' || method === 'HEAD' ? 'read' : 'shared-write');
  const name = kebabCase(id);
  if (name === '')
    fail(`the operationId ${JSON.stringify(id)} has no letter or digit to name a tool`);
  const descriptor: ToolDescriptor = {
    id: `${options.idPrefix}/${name}`,
    version: options.version,
    kind: 'http',
    description: describe(id, method, found.path, operation),
    inputSchema,
    sideEffect: { class: cls as SideEffectClass },
    execution: execution as unknown as Record<string, unknown>,
  };
  if (operation.summary) descriptor.title = operation.summary.trim();
  return descriptor;
}

function list<T>(value: T[] | undefined): T[] {
  return Array.isArray(value) ? value : [];
}

/** The operation's summary and description, or its method and path when it has neither. */
function describe(id: string, method: string, path: string, op: Operation): string {
  const parts = [op.summary, op.description].map((s) => s?.trim()).filter((s) => !!s);
  const text = [...new Set(parts)].join('\n\n');
  return text || `${id}: ${method} ${path}`;
}

function parameterSchema(id: string, p: Parameter): Record<string, unknown> {
  const raw = p.schema ?? Object.values(p.content ?? {})[0]?.schema ?? {};
  const schema = requestSchema(raw, `${id}: parameter ${p.name}`);
  if (p.description && schema.description === undefined) schema.description = p.description;
  return schema;
}

/** The absolute base URL of an operation, without a trailing "/". */
function baseOf(
  id: string,
  found: Found,
  docServers: Server[] | undefined,
  options: OpenApiImportOptions,
): string {
  let url = options.baseUrl;
  if (url === undefined) {
    const server = (found.operation.servers ?? found.servers ?? docServers)?.[0];
    if (server === undefined)
      fail(`${id}: the document names no server; give the base URL (--base-url)`);
    url = server.url.replace(/\{([^}]+)\}/g, (whole, name: string) => {
      const value = server.variables?.[name]?.default;
      if (value === undefined)
        fail(`${id}: server variable {${name}} has no default; give the base URL`);
      return value;
    });
  }
  if (!/^https?:\/\/[^/]/i.test(url))
    fail(
      `${id}: the server URL ${JSON.stringify(url)} is not an absolute http(s) URL; give the base URL (--base-url)`,
    );
  return url.replace(/\/+$/, '');
}
