/**
 * The exact origin of an http(s) URL as one string, `scheme://host:port`: the default port made
 * explicit (80 for http, 443 for https), the host as the WHATWG URL parser spells it (lower case,
 * IPv4 in dotted decimal, IPv6 compressed and in brackets, an IDN as punycode) less one trailing
 * dot. Two spellings of one origin give the same string; a different scheme or port never does.
 * User info is not part of an origin and is ignored here; callers that must refuse it check it.
 * @returns undefined for a text that does not parse as a URL, or a scheme other than http(s).
 */
export function exactOrigin(url: string | URL): string | undefined {
  let u: URL;
  try {
    u = typeof url === 'string' ? new URL(url) : url;
  } catch {
    return undefined;
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:') return undefined;
  const host = u.hostname.endsWith('.') ? u.hostname.slice(0, -1) : u.hostname;
  if (host === '' || host.endsWith('.')) return undefined;
  const port = u.port === '' ? (u.protocol === 'https:' ? 443 : 80) : Number(u.port);
  return `${u.protocol}//${host}:${port}`;
}

/** A brokered header and the exact origin it is meant for. */
export interface OriginBoundHeader {
  /**
   * The {@link exactOrigin} the header may be sent to; absent: every request of the call (the
   * descriptor named no origin).
   */
  origin?: string;
  name: string;
  value: string;
}

/**
 * The headers of `headers` meant for a request to `url`: those bound to exactly its origin
 * (scheme, host and port) and those bound to none. The one rule every place that adds a brokered
 * header applies (the egress proxy, the HTTP executor, MCP upstreams over HTTP), so a credential
 * meant for `https://api.example.com:443` never goes to port 8080 or to plain http of that host.
 * Names are lower-cased; a later header of the same name replaces an earlier one.
 */
export function headersForOrigin(
  headers: readonly OriginBoundHeader[],
  url: string | URL,
): Record<string, string> {
  const origin = exactOrigin(url);
  const out: Record<string, string> = {};
  for (const h of headers)
    if (h.origin === undefined || (origin !== undefined && h.origin === origin))
      out[h.name.toLowerCase()] = h.value;
  return out;
}
