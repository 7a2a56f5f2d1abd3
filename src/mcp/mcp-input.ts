import { isSideEffectClass } from '../core/index.js';
import type { BindingRequest } from './mcp-descriptor.js';
import type { McpTransport } from './mcp-server.js';
import { invalid } from './mcp-ledger.js';

/**
 * A registration's transport, checked and copied.
 * @throws GatehouseError INVALID_INPUT naming the field, or when `checkUrl` refuses the URL.
 */
export function normalizeTransport(
  t: McpTransport,
  checkUrl: (url: string) => string | null,
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
    return {
      type: 'stdio',
      command: t.command,
      args: [...args],
      ...(t.env ? { env: { ...t.env } } : {}),
    };
  }
  if (t.type === 'http') {
    if (typeof t.url !== 'string')
      throw invalid('/transport/url must be a string.', '/transport/url');
    const why = checkUrl(t.url);
    if (why !== null) throw invalid(`/transport/url is not allowed: ${why}.`, '/transport/url');
    return { type: 'http', url: new URL(t.url).href };
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
}

/** The transport without environment values (they may hold credentials). */
export function redactTransport(t: McpTransport): Record<string, unknown> {
  return t.type === 'stdio'
    ? { type: 'stdio', command: t.command, args: t.args, env: Object.keys(t.env ?? {}) }
    : { type: 'http', url: t.url };
}
