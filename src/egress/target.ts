import { looksLikeIpv4, parseIp } from './ip-address.js';
import type { IpAddress } from './ip-address.js';

/** Where a request through the proxy wants to go. */
export interface EgressTarget {
  /** The host as it will be recorded: lower case, no trailing dot, no brackets. */
  host: string;
  port: number;
  /** The address an IP-literal host names; `'legacy'` for a non-standard IPv4 spelling. */
  literal?: IpAddress | 'legacy';
}

/** A plain-HTTP target: the authority plus the origin-form path to send upstream. */
interface EgressHttpTarget extends EgressTarget {
  path: string;
}

/** A parse result: the target, or why the request is malformed (answered 400). */
type Parsed<T> = { ok: true; target: T } | { ok: false; reason: string };

/**
 * Lower-cases a DNS name and strips one trailing dot; `undefined` when it is not a name
 * (labels of letters, digits, `-` and `_`, 1–63 characters each, 253 in all).
 */
export function normalizeHostName(text: string): string | undefined {
  const name = (text.endsWith('.') ? text.slice(0, -1) : text).toLowerCase();
  if (name.length === 0 || name.length > 253) return undefined;
  const labels = name.split('.');
  return labels.every((l) => /^[a-z0-9_](?:[a-z0-9_-]{0,61}[a-z0-9_])?$/.test(l))
    ? name
    : undefined;
}

/** Parses a CONNECT request target: `host:port` or `[v6]:port`; the port is required. */
export function parseConnectTarget(authority: string): Parsed<EgressTarget> {
  return parseAuthority(authority, undefined);
}

/**
 * Parses an absolute-form plain-HTTP request target (`http://host[:port]/path?query`). Origin-form
 * (`/path`) and `https://` are refused: a client must name the host, and must tunnel TLS with
 * CONNECT. User info (`user:pass@`) is refused rather than forwarded.
 */
export function parseHttpTarget(url: string): Parsed<EgressHttpTarget> {
  const m = /^http:\/\/([^/?#]*)([^#]*)/i.exec(url);
  if (!m) {
    return {
      ok: false,
      reason: url.toLowerCase().startsWith('https:')
        ? 'https:// requests must be tunnelled with CONNECT'
        : 'the request target must be an absolute http:// URL (this is a forward proxy)',
    };
  }
  const parsed = parseAuthority(m[1]!, 80);
  if (!parsed.ok) return parsed;
  const rest = m[2]!;
  const path = rest === '' ? '/' : rest.startsWith('?') ? `/${rest}` : rest;
  return { ok: true, target: { ...parsed.target, path } };
}

function parseAuthority(authority: string, defaultPort: number | undefined): Parsed<EgressTarget> {
  const bad = (why: string): Parsed<EgressTarget> => ({ ok: false, reason: why });
  if (authority.includes('@')) return bad('user info in the request target is not allowed');
  const m = /^(\[[^\]]*\]|[^:[\]]*)(?::(\d{0,5}))?$/.exec(authority);
  if (!m) {
    return bad(`malformed host and port (${describe(authority)}; expected host:port or [v6]:port)`);
  }
  const hostText = m[1]!;
  const portText = m[2];
  let port = defaultPort;
  if (portText !== undefined && portText !== '') port = Number(portText);
  if (port === undefined) return bad('CONNECT needs a host:port target');
  if (!Number.isInteger(port) || port < 1 || port > 65535) return bad('port out of range');
  if (hostText.startsWith('[')) {
    const ip = parseIp(hostText.slice(1, -1));
    if (ip === undefined) return bad(`malformed IPv6 literal (${describe(hostText)})`);
    return { ok: true, target: { host: hostText.slice(1, -1).toLowerCase(), port, literal: ip } };
  }
  const host = (hostText.endsWith('.') ? hostText.slice(0, -1) : hostText).toLowerCase();
  if (looksLikeIpv4(host)) {
    return { ok: true, target: { host, port, literal: parseIp(host) ?? 'legacy' } };
  }
  const name = normalizeHostName(host);
  if (name === undefined) {
    return bad(`malformed host name (${describe(hostText)}; ${hostNameProblem(host)})`);
  }
  return { ok: true, target: { host: name, port } };
}

/**
 * Describes client text that could not be parsed without quoting any of it: the reason is logged,
 * signed into the receipt and echoed to the client, and a sandboxed tool may have put a secret
 * (or a part of one no redactor can recognize) there.
 */
function describe(text: string): string {
  return `${text.length} character${text.length === 1 ? '' : 's'}, not quoted`;
}

/** Which rule of {@link normalizeHostName} a lower-cased, dot-stripped name breaks. */
function hostNameProblem(name: string): string {
  if (name.length === 0) return 'empty';
  if (name.length > 253) return 'longer than 253 characters';
  const labels = name.split('.');
  const at = labels.findIndex((l) => l.length === 0 || l.length > 63);
  if (at >= 0)
    return `label ${at + 1} is ${labels[at]!.length === 0 ? 'empty' : 'longer than 63 characters'}`;
  const bad = name.search(/[^a-z0-9_.-]/);
  if (bad >= 0) return `character ${bad + 1} is not a letter, digit, '-', '_' or '.'`;
  return 'a label starts or ends with -';
}
