import { existsSync } from 'node:fs';
import { isAbsolute, resolve } from 'node:path';
import { exactOrigin, isSideEffectClass } from '../core/index.js';
import {
  SECRET_NAME_PATTERN,
  SECRET_SCOPE_PATTERN,
  credentialNeedProblems,
  credentialNeedSentences,
  credentialNeedSchema,
  headerOrigin,
} from '../secrets/index.js';
import type { CredentialNeed } from '../secrets/index.js';
import { TOOL_ID_PATTERN, TOOL_VERSION_PATTERN } from '../tools/index.js';
import type { BindingRequest } from './mcp-descriptor.js';
import type { McpTransport } from './mcp-server.js';
import { invalid } from './mcp-ledger.js';
import { defaultCheckUrl } from './server-identity.js';
import { checkWritableDirs } from './writable-dirs.js';
import type { ProtectedDir } from './writable-dirs.js';

/**
 * A registration's transport, checked and copied; a stdio server's writable directories must be
 * clear of `protectedDirs` ({@link checkWritableDirs}). An HTTP URL is checked for its form
 * ({@link defaultCheckUrl}) and its credential needs for theirs before `checkUrl` judges where
 * it goes (the egress allow-list): a malformed registration is told so, not that it is refused.
 * @throws GatehouseError INVALID_INPUT naming the field, or when `checkUrl` refuses the URL.
 */
export function normalizeTransport(
  t: McpTransport,
  checkUrl: (url: string) => string | null,
  protectedDirs: readonly ProtectedDir[] = [],
): McpTransport {
  if (typeof t !== 'object' || t === null)
    throw invalid('/transport must be an object.', '/transport');
  if (t.type === 'stdio') {
    if (typeof t.command !== 'string' || t.command === '')
      throw invalid('/transport/command must be a non-empty string.', '/transport/command');
    const args = t.args ?? [];
    if (!Array.isArray(args) || args.some((a) => typeof a !== 'string'))
      throw invalid('/transport/args must be an array of strings.', '/transport/args');
    if (t.env !== undefined) {
      const ok =
        typeof t.env === 'object' &&
        t.env !== null &&
        Object.values(t.env).every((v) => typeof v === 'string');
      if (!ok) throw invalid('/transport/env must map names to strings.', '/transport/env');
    }
    [t.command, ...args].forEach((word, i) => {
      if (isAbsolute(word) || word.startsWith('-') || !existsSync(word)) return;
      const at = i === 0 ? '/transport/command' : `/transport/args/${i - 1}`;
      throw invalid(
        `${at} (${JSON.stringify(word)}) names a file relative to the gateway's working directory; give its absolute path (${resolve(word)}): a stdio server runs in a sandbox whose working directory is its own workspace.`,
        at,
      );
    });
    const credentials = checkCredentials(t.credentials, 'env');
    const writableDirs = checkWritableDirs(t.writableDirs, protectedDirs);
    return {
      type: 'stdio',
      command: t.command,
      args: [...args],
      ...(t.env ? { env: { ...t.env } } : {}),
      ...(credentials ? { credentials } : {}),
      ...(writableDirs ? { writableDirs } : {}),
    };
  }
  if (t.type === 'http') {
    if (typeof t.url !== 'string')
      throw invalid('/transport/url must be a string.', '/transport/url');
    const malformed = defaultCheckUrl(t.url);
    if (malformed !== null)
      throw invalid(`/transport/url is not allowed: ${malformed}.`, '/transport/url');
    const credentials = checkCredentials(t.credentials, 'header');
    checkBoundTo(t.url, credentials ?? []);
    const refused = checkUrl(t.url);
    if (refused !== null)
      throw invalid(`/transport/url is not allowed: ${refused}.`, '/transport/url');
    return { type: 'http', url: new URL(t.url).href, ...(credentials ? { credentials } : {}) };
  }
  throw invalid('/transport/type must be "stdio" or "http".', '/transport/type');
}

/** @throws GatehouseError INVALID_INPUT when a binding request is malformed. */
export function checkBindingRequest(req: BindingRequest): void {
  if (typeof req.tool !== 'string' || req.tool === '')
    throw invalid('/tool must be a non-empty string.', '/tool');
  if (!isSideEffectClass(req.class))
    throw invalid('/class must be read, workspace-write, shared-write or production.', '/class');
  const d = req.descriptor as { id?: unknown; version?: unknown } | undefined;
  if (typeof d?.id !== 'string' || d.id === '' || typeof d.version !== 'string' || d.version === '')
    throw invalid('/descriptor must be {id, version} (non-empty strings).', '/descriptor');
  if (d.id.length > 200 || !TOOL_ID.test(d.id))
    throw invalid(
      `/descriptor/id ${JSON.stringify(d.id)} is not a tool id: lower-case letters, digits, '.', '_' and '-', in segments joined by '/' (e.g. everything/echo), at most 200 characters.`,
      '/descriptor/id',
    );
  if (!TOOL_VERSION.test(d.version))
    throw invalid(
      `/descriptor/version ${JSON.stringify(d.version)} is not a semantic version (e.g. 1.0.0).`,
      '/descriptor/version',
    );
}

const TOOL_ID = new RegExp(TOOL_ID_PATTERN);
const TOOL_VERSION = new RegExp(TOOL_VERSION_PATTERN);

/** The transport without environment values (they may hold credentials); needs name no value. */
export function redactTransport(t: McpTransport): Record<string, unknown> {
  const credentials = t.credentials ? { credentials: t.credentials } : {};
  return t.type === 'stdio'
    ? {
        type: 'stdio',
        command: t.command,
        args: t.args,
        env: Object.keys(t.env ?? {}),
        ...credentials,
        ...(t.writableDirs ? { writableDirs: t.writableDirs } : {}),
      }
    : { type: 'http', url: t.url, ...credentials };
}

/**
 * Refuses a header need bound to another origin than the server's: it would never be sent (a
 * credential goes only to the exact origin it is bound to), and the server would answer 401.
 * @throws GatehouseError INVALID_INPUT naming the need.
 */
function checkBoundTo(url: string, needs: readonly CredentialNeed[]): void {
  const server = exactOrigin(url);
  needs.forEach((need, i) => {
    const bound = 'header' in need.inject ? headerOrigin(need.inject) : undefined;
    if (bound === undefined || bound === server) return;
    const p = `/transport/credentials/${i}/inject`;
    throw invalid(
      `${p} is bound to ${bound}, but the server is at ${server ?? url}, so it would never be sent. A credential goes only to the exact origin (scheme, host and port) it is bound to; a host alone means https://<host>:443. Name the server's origin in "origin", or leave both out.`,
      p,
    );
  });
}

const injectPatterns = credentialNeedSchema.properties.inject.oneOf;
const ENV_NAME = new RegExp(injectPatterns[0].properties.env.pattern);
const HEADER_NAME = new RegExp(injectPatterns[2].properties.header.pattern);
const HEADER_FORMAT = new RegExp(injectPatterns[2].properties.format.pattern);
const HOST = new RegExp(injectPatterns[2].properties.host.pattern);
const ORIGIN = new RegExp(injectPatterns[2].properties.origin.pattern);

/**
 * A transport's credential needs, checked and copied: a stdio server takes them as environment
 * variables, an HTTP one as request headers; files are refused (an upstream has no secrets mount).
 * @throws GatehouseError INVALID_INPUT naming the field.
 */
function checkCredentials(raw: unknown, as: 'env' | 'header'): CredentialNeed[] | undefined {
  if (raw === undefined) return undefined;
  const at = '/transport/credentials';
  if (!Array.isArray(raw) || raw.length > 32)
    throw invalid(`${at} must be an array of at most 32 credential needs.`, at);
  const needs = raw.map((n: unknown, i): CredentialNeed => {
    const p = `${at}/${i}`;
    const need = n as { ref?: unknown; scope?: unknown; inject?: Record<string, unknown> } | null;
    if (typeof need !== 'object' || need === null) throw invalid(`${p} must be an object.`, p);
    if (typeof need.ref !== 'string' || !new RegExp(SECRET_NAME_PATTERN).test(need.ref))
      throw invalid(`${p}/ref must be a secret name.`, `${p}/ref`);
    if (typeof need.scope !== 'string' || !new RegExp(SECRET_SCOPE_PATTERN).test(need.scope))
      throw invalid(`${p}/scope must be a scope (printable ASCII, no spaces).`, `${p}/scope`);
    const inject = need.inject;
    if (typeof inject !== 'object' || inject === null)
      throw invalid(`${p}/inject must be an object.`, `${p}/inject`);
    const keys = Object.keys(inject);
    if (as === 'env') {
      if (keys.length !== 1 || typeof inject.env !== 'string' || !ENV_NAME.test(inject.env))
        throw invalid(
          `${p}/inject must be {env: NAME} for a stdio server (an upper-case variable name, not PATH, HOME, a proxy or LD_*); files and headers cannot reach it.`,
          `${p}/inject`,
        );
      return { ref: need.ref, scope: need.scope, inject: { env: inject.env } };
    }
    const { header, format, host, origin } = inject;
    const ok =
      keys.every((k) => k === 'header' || k === 'format' || k === 'host' || k === 'origin') &&
      typeof header === 'string' &&
      HEADER_NAME.test(header) &&
      (format === undefined || (typeof format === 'string' && HEADER_FORMAT.test(format))) &&
      (host === undefined || (typeof host === 'string' && HOST.test(host))) &&
      (origin === undefined || (typeof origin === 'string' && ORIGIN.test(origin)));
    if (!ok)
      throw invalid(
        `${p}/inject must be {header, format?, host? or origin?} for an HTTP server (host: a lower-case name, sent to https://<host>:443 only; origin: http(s)://host[:port]); environment variables and files cannot reach it.`,
        `${p}/inject`,
      );
    return {
      ref: need.ref,
      scope: need.scope,
      inject: {
        header,
        ...(format === undefined ? {} : { format }),
        ...(host === undefined ? {} : { host }),
        ...(origin === undefined ? {} : { origin }),
      },
    };
  });
  const problems = credentialNeedSentences(credentialNeedProblems(needs));
  if (problems.length > 0) throw invalid(`${at}: ${problems.join('; ')}.`, at);
  return needs.length > 0 ? needs : undefined;
}
