import { EgressAllowList } from './allow-list.js';
import { authorizeEgress, systemResolve } from './authorize.js';
import type { EgressResolver } from './authorize.js';
import { formatIp } from './ip-address.js';
import { pinnedFetch } from './pinned-fetch.js';
import type { PinnedAddress, PinnedFetch } from './pinned-fetch.js';
import { PinnedFetchPool } from './pinned-fetch-pool.js';
import { parseConnectTarget } from './target.js';
import type { EgressTarget } from './target.js';
import type { EgressDecision } from './decision.js';

/** Options of {@link GatewayEgress}. */
export interface GatewayEgressOptions {
  /** The allow-list's entries, read at every check, so a changed list applies to the next one. */
  allow: () => readonly string[];
  /** Where the entries are set, for messages (e.g. `GATEHOUSE_EGRESS_ALLOW`). */
  source?: string;
  /** DNS lookup; by default `dns.promises.lookup` with `all: true`. */
  resolve?: EgressResolver;
  /** Milliseconds the lookup of an upstream's host may take. Default 5000. */
  resolveTimeoutMs?: number;
  /** Certificates (PEM) to trust for https instead of the system's (tests, private CAs). */
  ca?: string | Buffer;
}

/** Methods that change nothing by HTTP's definition: their requests may reuse connections. */
const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

/** One egress decision of the gateway, with the pinned fetch when it allowed the connection. */
export interface GatewayEgressOpening {
  decision: EgressDecision;
  /** Present when allowed; close it when done with it (its connections may be kept for reuse). */
  fetch?: PinnedFetch;
}

/**
 * The egress the gateway makes itself (HTTP MCP upstreams; any HTTP it sends on a tool's behalf),
 * on the same allow-list as the sandboxes: a URL's host and port must be listed to register it
 * ({@link check}); each connection resolves the host once, refuses non-public addresses that are
 * not listed by IP, and gets a fetch that reaches only the addresses it checked ({@link connect}).
 */
export class GatewayEgress {
  private parsed: { key: string; list: EgressAllowList } | null = null;
  /** Connections kept between the requests {@link open} allows. */
  private readonly kept = new PinnedFetchPool();

  constructor(private readonly options: GatewayEgressOptions) {}

  /**
   * Judges a URL's host and port against the allow-list, without DNS (registration).
   * @returns null when listed, otherwise why not and what to add.
   * @throws GatehouseError INVALID_INPUT when an entry of the allow-list is malformed.
   */
  check(url: string): string | null {
    const target = targetOf(url);
    if (typeof target === 'string') return target;
    const list = this.list();
    return list.checkHost(target).allowed ? null : this.refusal(target);
  }

  /**
   * Authorizes a new connection to an upstream (every connection, reconnects included): the
   * allow-list again, then one DNS lookup whose answers must be public or listed by IP. Safe to
   * repeat; each call resolves afresh.
   * @returns a fetch that connects only to the authorized addresses; close it with the connection.
   * @throws Error saying why egress is refused (nothing was sent to the upstream then).
   */
  async connect(url: URL): Promise<PinnedFetch> {
    const { decision, addresses } = await this.decide(url, 'GET');
    if (addresses === undefined) throw new Error(decision.reason);
    return pinnedFetch({
      origin: url,
      addresses,
      ...(this.options.ca === undefined ? {} : { ca: this.options.ca }),
    });
  }

  /**
   * Like {@link connect}, but never throws for a refusal: the decision (allowed or refused, why,
   * and the address connected to) is returned for the invocation record, with the pinned fetch
   * when allowed. Each call decides afresh; for GET, HEAD and OPTIONS the connections of an
   * identical decision (same origin, same checked addresses) are reused.
   */
  async open(url: URL, method: string): Promise<GatewayEgressOpening> {
    const { decision, addresses } = await this.decide(url, method);
    if (addresses === undefined) return { decision };
    // A kept connection the upstream closes just as a request goes out breaks that request after
    // it was sent: harmless for a safe method, an Uncertain effect for any other. So only safe
    // methods reuse connections; the others get their own.
    const fetch = SAFE_METHODS.has(method.toUpperCase())
      ? this.kept.take(url, addresses, this.options.ca)
      : pinnedFetch({
          origin: url,
          addresses,
          ...(this.options.ca === undefined ? {} : { ca: this.options.ca }),
        });
    return { decision, fetch };
  }

  /** The egress decision for `url`, with the checked addresses when it is allowed. */
  private async decide(
    url: URL,
    method: string,
  ): Promise<{ decision: EgressDecision; addresses?: PinnedAddress[] }> {
    const at = new Date().toISOString();
    const target = targetOf(url.href);
    if (typeof target === 'string')
      return {
        decision: {
          at,
          method,
          host: '',
          port: 0,
          allowed: false,
          reason: `egress refused: ${target}`,
        },
      };
    const base = { at, method, host: target.host, port: target.port };
    const list = this.list();
    if (!list.checkHost(target).allowed)
      return {
        decision: { ...base, allowed: false, reason: `egress refused: ${this.refusal(target)}` },
      };
    const auth = await authorizeEgress(
      list,
      target,
      this.options.resolve ?? systemResolve,
      this.options.resolveTimeoutMs ?? 5000,
    );
    if (!auth.allowed)
      return {
        decision: {
          ...base,
          allowed: false,
          reason: `egress to ${target.host} port ${target.port} refused: ${auth.reason}`,
        },
      };
    const addresses = auth.addresses.map((a) => ({ address: formatIp(a), family: a.family }));
    return {
      decision: {
        ...base,
        allowed: true,
        reason: `allowed by "${auth.entry}"`,
        address: addresses[0]!.address,
      },
      addresses,
    };
  }

  /** Ends the connections kept for {@link open}. Safe to repeat. */
  close(): void {
    this.kept.close();
  }

  /** The allow-list as it is now, parsed again only when its entries changed. */
  private list(): EgressAllowList {
    const entries = this.options.allow();
    const key = JSON.stringify(entries);
    if (this.parsed?.key !== key) this.parsed = { key, list: EgressAllowList.parse(entries) };
    return this.parsed.list;
  }

  private refusal(target: EgressTarget): string {
    const source = this.options.source ?? 'the egress allow-list';
    const entries = this.options.allow();
    const more = entries.length > 8 ? `, … (${entries.length - 8} more)` : '';
    const listing =
      entries.length === 0 ? 'it is empty' : `${entries.slice(0, 8).join(', ')}${more}`;
    const entry = target.host.includes(':')
      ? `[${target.host}]:${target.port}`
      : `${target.host}:${target.port}`;
    return `host ${target.host} port ${target.port} is not in the egress allow-list (${source}: ${listing}); to allow it, add "${entry}" to ${source}`;
  }
}

/** The host and port a URL reaches (default port by scheme), or why it has none. */
function targetOf(text: string): EgressTarget | string {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return `${JSON.stringify(text)} is not a URL`;
  }
  const port = url.port === '' ? (url.protocol === 'https:' ? 443 : 80) : Number(url.port);
  const parsed = parseConnectTarget(`${url.hostname}:${port}`);
  return parsed.ok ? parsed.target : `the host of ${url.origin} is not usable: ${parsed.reason}`;
}
