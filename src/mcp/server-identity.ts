import { canonicalDigest } from '../core/index.js';
import type { McpTransport } from './mcp-server.js';

/**
 * A server's identity: SHA-256 hex of the JCS of its transport type and command with arguments
 * (whose package specifier, such as `npx pkg@1.2.3`, carries the version) and the directories it
 * may write, or its URL. The name and environment are not part of it: renaming a server does not make it another server.
 */
export function serverIdentity(t: McpTransport): string {
  switch (t.type) {
    case 'stdio':
      // Only when declared, so the identities of servers registered before them stay the same.
      return canonicalDigest({
        type: 'stdio',
        command: t.command,
        args: t.args,
        ...(t.writableDirs ? { writableDirs: t.writableDirs } : {}),
      });
    case 'http':
      return canonicalDigest({ type: 'http', url: new URL(t.url).href });
  }
}

/**
 * The form every HTTP upstream URL must have: a URL, http(s) only, no credentials in it. Applied
 * to every registration, before any egress allow-list.
 * @returns null when allowed, otherwise why not.
 */
export function defaultCheckUrl(url: string): string | null {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    return `${JSON.stringify(url)} is not a URL`;
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:')
    return `only http and https upstreams are allowed, not ${u.protocol}`;
  if (u.username !== '' || u.password !== '')
    return 'credentials in the URL are not allowed; store them with the broker';
  return null;
}
