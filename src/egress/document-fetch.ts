import { systemResolve, withTimeout } from './authorize.js';
import type { EgressResolver } from './authorize.js';
import { formatIp, parseIp, parseIpRange, rangeContains, specialRange } from './ip-address.js';
import type { IpAddress } from './ip-address.js';
import type { PinnedAddress } from './pinned-fetch.js';
import { parseConnectTarget } from './target.js';

/** Options of {@link authorizeDocumentFetch}. */
export interface DocumentFetchOptions {
  /** Allow private, loopback and other non-public addresses (never link-local or metadata). */
  allowPrivate?: boolean;
  /** DNS lookup; by default the system's. */
  resolve?: EgressResolver;
  /** Milliseconds the lookup may take. Default 5000. */
  resolveTimeoutMs?: number;
}

/** Whether a document URL may be fetched, and if so at which checked addresses only. */
export type DocumentFetchAuthorization =
  { allowed: true; addresses: PinnedAddress[] } | { allowed: false; reason: string };

/**
 * Addresses never fetched from, whatever the options: link-local (the cloud metadata service at
 * 169.254.169.254 and its IPv6 twin fd00:ec2::254 among them). No document a person means to
 * import lives there; a URL or a redirect that leads there is an attempt to read credentials.
 */
const NEVER = ['169.254.0.0/16', 'fe80::/10', 'fd00:ec2::254/128'].map((t) => parseIpRange(t)!);

/**
 * Judges a URL a client is about to download a document from (an OpenAPI document): http(s) only,
 * no user info, the host resolved once (an IP literal is its own answer), and every answer public
 * — or, with `allowPrivate`, anything but link-local and metadata. Decides before any connection;
 * the caller must connect only to the returned addresses (a pinned fetch) and judge every redirect
 * afresh. Never throws.
 */
export async function authorizeDocumentFetch(
  url: URL,
  options: DocumentFetchOptions = {},
): Promise<DocumentFetchAuthorization> {
  const refuse = (reason: string): DocumentFetchAuthorization => ({ allowed: false, reason });
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    return refuse(`${url.protocol} URLs are not fetched; give an http(s) URL or a file`);
  if (url.username !== '' || url.password !== '')
    return refuse('a URL with user info is not fetched');
  const port = url.port === '' ? (url.protocol === 'https:' ? 443 : 80) : Number(url.port);
  const parsed = parseConnectTarget(`${url.hostname}:${port}`);
  if (!parsed.ok) return refuse(`the host of ${url.origin} is not usable: ${parsed.reason}`);
  const { host, literal } = parsed.target;
  if (literal === 'legacy') return refuse(`${host} is an IP address in a non-standard form`);
  let found: IpAddress[];
  if (literal !== undefined) found = [literal];
  else {
    try {
      const texts = await withTimeout(
        (options.resolve ?? systemResolve)(host),
        options.resolveTimeoutMs ?? 5000,
      );
      found = texts.map((t) => parseIp(t)).filter((ip): ip is IpAddress => ip !== undefined);
    } catch (err) {
      const code = (err as { code?: unknown }).code;
      return refuse(
        `could not resolve host ${host} (${typeof code === 'string' ? code : (err as Error).message})`,
      );
    }
    if (found.length === 0) return refuse(`host ${host} resolves to no address`);
  }
  for (const ip of found) {
    const address = formatIp(ip);
    const where = literal === undefined ? `host ${host} resolves to ${address},` : `${address} is`;
    if (NEVER.some((r) => rangeContains(r, ip)))
      return refuse(`${where} a link-local or cloud metadata address, which is never fetched`);
    const special = specialRange(ip);
    if (special !== undefined && options.allowPrivate !== true)
      return refuse(
        `${where} a ${special} address; only public addresses are fetched unless private ones are allowed (--allow-private-address)`,
      );
  }
  return {
    allowed: true,
    addresses: found.map((ip) => ({ address: formatIp(ip), family: ip.family })),
  };
}
