import { lookup } from 'node:dns/promises';
import { formatIp, parseIp, specialRange } from './ip-address.js';
import type { IpAddress } from './ip-address.js';
import type { EgressAllowList } from './allow-list.js';
import type { EgressTarget } from './target.js';

/** Resolves a host name to IP address texts (DNS). */
export type EgressResolver = (host: string) => Promise<string[]>;

/** The system resolver (`getaddrinfo`, every address, in its order). */
export const systemResolve: EgressResolver = async (host) =>
  (await lookup(host, { all: true, verbatim: true })).map((a) => a.address);

/** Whether a target may be reached, and if so at which checked addresses. */
export type EgressAuthorization =
  | { allowed: true; entry: string; addresses: IpAddress[] }
  | { allowed: false; status: 403 | 502; reason: string };

/**
 * Judges a target against the allow-list, resolves a host name once, and refuses when any address
 * it resolves to is private, loopback, link-local, multicast or otherwise not public — unless an IP
 * or CIDR entry lists that address and port. The caller must connect only to the returned
 * addresses, never resolve again (a second lookup could answer differently: DNS rebinding).
 * Never throws; a failed or slow lookup is a 502 refusal.
 */
export async function authorizeEgress(
  list: EgressAllowList,
  target: EgressTarget,
  resolve: EgressResolver,
  timeoutMs: number,
): Promise<EgressAuthorization> {
  const verdict = list.checkHost(target);
  if (!verdict.allowed) return { allowed: false, status: 403, reason: verdict.reason };
  const { host, port, literal } = target;
  if (literal !== undefined && literal !== 'legacy') {
    return { allowed: true, entry: verdict.entry, addresses: [literal] };
  }
  let texts: string[];
  try {
    texts = await withTimeout(resolve(host), timeoutMs);
  } catch (err) {
    const code = (err as { code?: unknown }).code;
    const why = typeof code === 'string' ? code : err instanceof Error ? err.message : 'failed';
    return { allowed: false, status: 502, reason: `could not resolve host ${host} (${why})` };
  }
  const addresses: IpAddress[] = [];
  for (const text of texts) {
    const ip = parseIp(text);
    if (ip === undefined) {
      return { allowed: false, status: 502, reason: `DNS for ${host} answered a non-address` };
    }
    const special = specialRange(ip);
    if (special !== undefined && !list.permitsAddress(ip, port)) {
      const address = formatIp(ip);
      const entry = ip.family === 6 ? `[${address}]:${port}` : `${address}:${port}`;
      return {
        allowed: false,
        status: 403,
        reason: `host ${host} resolves to ${address}, a ${special} address; egress to non-public addresses is refused unless the address is listed (add "${entry}" to the allow-list if this is intended)`,
      };
    }
    if (!addresses.some((a) => formatIp(a) === formatIp(ip))) addresses.push(ip);
  }
  if (addresses.length === 0) {
    return { allowed: false, status: 502, reason: `host ${host} resolves to no address` };
  }
  return { allowed: true, entry: verdict.entry, addresses };
}

/** `promise`, or a rejection after `ms` milliseconds. */
export async function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`timed out after ${ms} ms`)), ms);
  });
  try {
    return await Promise.race([promise, timeout]);
  } finally {
    clearTimeout(timer);
  }
}
