import { isIP } from 'node:net';
import { ErrorCode, GatehouseError } from '../core/index.js';

/** How clients reach the gateway: its public URL, the names and origins `/mcp` accepts, proxies. */
export interface ReachConfig {
  /**
   * The URL clients reach the gateway at (through a reverse proxy, say), without a trailing
   * slash; null when they reach it where it listens. Its host and origin are accepted by `/mcp`.
   */
  publicUrl: string | null;
  /**
   * Hosts `/mcp` accepts besides the local names and the public URL's (DNS rebinding protection),
   * lower case: `name` on any port, or `name:port`.
   */
  allowedHosts: string[];
  /** Browser origins `/mcp` accepts besides the request's own and the public URL's, lower case. */
  allowedOrigins: string[];
  /**
   * The reverse proxies whose `X-Forwarded-For`, `-Host` and `-Proto` are believed: addresses,
   * CIDR ranges, or `loopback`, `linklocal`, `uniquelocal`. Empty: those headers are ignored.
   */
  trustedProxies: string[];
}

/** What `gatehouse serve` may set: each list as one comma-separated string, like its variable. */
export interface ReachFlags {
  publicUrl?: string;
  allowedHosts?: string;
  allowedOrigins?: string;
  trustedProxies?: string;
}

const PROXY_NAMES = ['loopback', 'linklocal', 'uniquelocal'];
/** A DNS name or IPv4 address, or a bracketed IPv6 address; then an optional port. */
const HOST =
  /^(?:[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)*|\[[0-9a-f:.]+\])(?::\d{1,5})?$/;

/**
 * The reach settings from `flags`, then `GATEHOUSE_PUBLIC_URL`, `GATEHOUSE_ALLOWED_HOSTS`,
 * `GATEHOUSE_ALLOWED_ORIGINS` and `GATEHOUSE_TRUSTED_PROXIES` (lists comma-separated), then none.
 * @throws GatehouseError INVALID_INPUT naming the setting, the entry, and the form it must take.
 */
export function loadReachConfig(flags: ReachFlags, env: NodeJS.ProcessEnv): ReachConfig {
  const raw = (flag: string | undefined, name: string) => flag ?? env[name] ?? '';
  return {
    publicUrl: publicUrl(raw(flags.publicUrl, 'GATEHOUSE_PUBLIC_URL')),
    allowedHosts: list(raw(flags.allowedHosts, 'GATEHOUSE_ALLOWED_HOSTS')).map(allowedHost),
    allowedOrigins: list(raw(flags.allowedOrigins, 'GATEHOUSE_ALLOWED_ORIGINS')).map(origin),
    trustedProxies: list(raw(flags.trustedProxies, 'GATEHOUSE_TRUSTED_PROXIES')).map(proxy),
  };
}

/** The hosts and origins `/mcp` accepts by configuration: the lists and the public URL's. */
export function mcpReachOf(reach: ReachConfig): {
  allowedHosts: string[];
  allowedOrigins: string[];
} {
  const pub = reach.publicUrl === null ? null : new URL(reach.publicUrl);
  return {
    allowedHosts: [...reach.allowedHosts, ...(pub ? [pub.host] : [])],
    allowedOrigins: [...reach.allowedOrigins, ...(pub ? [pub.origin] : [])],
  };
}

function list(value: string): string[] {
  return value
    .split(',')
    .map((x) => x.trim())
    .filter((x) => x !== '');
}

function invalid(message: string): GatehouseError {
  return new GatehouseError(ErrorCode.INVALID_INPUT, message);
}

function publicUrl(value: string): string | null {
  if (value.trim() === '') return null;
  let url: URL;
  try {
    url = new URL(value.trim());
  } catch {
    throw invalid(
      `GATEHOUSE_PUBLIC_URL (--public-url) must be an http or https URL such as https://gatehouse.example.com; got ${JSON.stringify(value)}.`,
    );
  }
  if (
    (url.protocol !== 'http:' && url.protocol !== 'https:') ||
    url.username !== '' ||
    url.password !== '' ||
    url.search !== '' ||
    url.hash !== ''
  )
    throw invalid(
      `GATEHOUSE_PUBLIC_URL (--public-url) must be an http or https URL without credentials, query or fragment, such as https://gatehouse.example.com; got ${JSON.stringify(value)}.`,
    );
  return url.href.replace(/\/+$/, '');
}

function allowedHost(entry: string): string {
  const host = entry.toLowerCase();
  const port = /:(\d+)$/.exec(host)?.[1];
  if (!HOST.test(host) || (port !== undefined && Number(port) > 65535))
    throw invalid(
      `GATEHOUSE_ALLOWED_HOSTS (--allowed-hosts): ${JSON.stringify(entry)} is not a host name; give names such as gatehouse.example.com (any port) or gatehouse.example.com:8443, comma-separated.`,
    );
  return host;
}

function origin(entry: string): string {
  let url: URL | undefined;
  try {
    url = new URL(entry);
  } catch {
    url = undefined;
  }
  // An origin is scheme, host and port only: what a browser sends in `Origin`.
  if (
    !url ||
    !['http:', 'https:'].includes(url.protocol) ||
    url.origin !== entry.toLowerCase().replace(/\/$/, '')
  )
    throw invalid(
      `GATEHOUSE_ALLOWED_ORIGINS (--allowed-origins): ${JSON.stringify(entry)} is not an origin; give scheme, host and optional port without a path, such as https://app.example.com, comma-separated.`,
    );
  return url.origin;
}

function proxy(entry: string): string {
  const [address = '', prefix, ...rest] = entry.split('/');
  const family = isIP(address);
  const bits = family === 4 ? 32 : 128;
  const ok =
    PROXY_NAMES.includes(entry) ||
    (family !== 0 &&
      rest.length === 0 &&
      (prefix === undefined || (/^\d{1,3}$/.test(prefix) && Number(prefix) <= bits)));
  if (!ok)
    throw invalid(
      `GATEHOUSE_TRUSTED_PROXIES (--trusted-proxies): ${JSON.stringify(entry)} is not an address; give IP addresses or CIDR ranges (10.0.0.0/8, ::1) or loopback, linklocal, uniquelocal, comma-separated.`,
    );
  return entry;
}
