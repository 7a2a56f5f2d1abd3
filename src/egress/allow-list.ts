import { ErrorCode, GatehouseError } from '../core/index.js';
import { formatIp, looksLikeIpv4, parseIpRange, rangeContains } from './ip-address.js';
import type { IpAddress, IpRange } from './ip-address.js';
import { normalizeHostName } from './target.js';
import type { EgressTarget } from './target.js';

/** The ports an entry without a port allows. */
const DEFAULT_EGRESS_PORTS: readonly number[] = [443, 80];

type Entry =
  | { kind: 'name'; text: string; name: string; ports: readonly number[] }
  | { kind: 'wildcard'; text: string; suffix: string; ports: readonly number[] }
  | { kind: 'ip'; text: string; range: IpRange; ports: readonly number[] };

/** What the allow-list says about one host and port, before any DNS lookup. */
export type HostVerdict = { allowed: true; entry: string } | { allowed: false; reason: string };

/**
 * The egress allow-list of one lease. Entries: `host`, `host:port`, `*.example.com` (any name below
 * example.com, not example.com itself), `*.example.com:port`, an IP literal, or a CIDR range
 * (IPv6 in brackets when a port follows: `[fd00::/8]:443`). An entry without a port allows 443
 * and 80. Host names compare case-insensitively, without a trailing dot.
 */
export class EgressAllowList {
  private constructor(private readonly entries: readonly Entry[]) {}

  /**
   * Parses the entries of a lease.
   * @throws GatehouseError `INVALID_INPUT` naming the first entry that is not one of the forms above.
   */
  static parse(texts: readonly string[]): EgressAllowList {
    return new EgressAllowList(texts.map(parseEntry));
  }

  /**
   * Judges a target by name and port. A host that is an IP literal must be covered by an IP or
   * CIDR entry; a legacy IPv4 spelling (`2130706433`, `0x7f.1`) is always refused.
   */
  checkHost(target: EgressTarget): HostVerdict {
    const { host, port, literal } = target;
    if (literal === 'legacy') {
      return {
        allowed: false,
        reason: `${host} is an IP address in a non-standard form; only dotted-decimal IPv4 and standard IPv6 literals are accepted, and only when listed`,
      };
    }
    if (literal !== undefined) {
      const address = formatIp(literal);
      if (this.permitsAddress(literal, port))
        return { allowed: true, entry: this.ipEntry(literal, port)! };
      const covering = this.entries.find((e) => e.kind === 'ip' && rangeContains(e.range, literal));
      if (covering !== undefined)
        return { allowed: false, reason: portReason(address, port, covering) };
      return {
        allowed: false,
        reason: `IP address ${address} is not in the egress allow-list of this lease${this.listing()}; connect by a listed host name, or list the address`,
      };
    }
    const matching = this.entries.filter((e) => matchesName(e, host));
    const hit = matching.find((e) => e.ports.includes(port));
    if (hit !== undefined) return { allowed: true, entry: hit.text };
    const first = matching[0];
    if (first !== undefined) return { allowed: false, reason: portReason(host, port, first) };
    return {
      allowed: false,
      reason: `host ${host} is not in the egress allow-list of this lease${this.listing()}`,
    };
  }

  /** True when an IP or CIDR entry covers `ip` and allows `port`. */
  permitsAddress(ip: IpAddress, port: number): boolean {
    return this.ipEntry(ip, port) !== undefined;
  }

  private ipEntry(ip: IpAddress, port: number): string | undefined {
    return this.entries.find(
      (e) => e.kind === 'ip' && rangeContains(e.range, ip) && e.ports.includes(port),
    )?.text;
  }

  private listing(): string {
    if (this.entries.length === 0) return ' (it is empty: this lease allows no egress)';
    const shown = this.entries.slice(0, 8).map((e) => e.text);
    const more = this.entries.length - shown.length;
    return `: ${shown.join(', ')}${more > 0 ? `, … (${more} more)` : ''}`;
  }
}

function matchesName(entry: Entry, name: string): boolean {
  if (entry.kind === 'name') return entry.name === name;
  if (entry.kind === 'wildcard') return name.endsWith(`.${entry.suffix}`);
  return false;
}

function portReason(host: string, port: number, entry: Entry): string {
  const ports = entry.ports.length === 1 ? `port ${entry.ports[0]}` : 'ports 443 and 80';
  return `port ${port} of ${host} is not allowed by this lease's egress allow-list (entry "${entry.text}" allows ${ports})`;
}

function parseEntry(raw: string): Entry {
  const text = raw.trim().toLowerCase();
  const invalid = (why: string): GatehouseError =>
    new GatehouseError(ErrorCode.INVALID_INPUT, `egress allow-list entry "${raw}" ${why}`, {
      details: { entry: raw },
    });
  let host = text;
  let portText: string | undefined;
  const bracketed = /^\[([^\]]+)\](?::(\d+))?$/.exec(text);
  if (bracketed) {
    host = bracketed[1]!;
    portText = bracketed[2];
  } else if (text.split(':').length === 2) {
    [host, portText] = text.split(':') as [string, string];
  }
  let ports = DEFAULT_EGRESS_PORTS;
  if (portText !== undefined) {
    const port = Number(portText);
    if (!/^\d{1,5}$/.test(portText) || port < 1 || port > 65535) {
      throw invalid('has a port that is not a number from 1 to 65535');
    }
    ports = [port];
  }
  if (host.includes(':') || host.includes('/') || looksLikeIpv4(host)) {
    const range = parseIpRange(host);
    if (range === undefined) {
      throw invalid(
        'is not a standard IP address or CIDR range (like 10.0.0.0/8 or [fd00::/8]:443)',
      );
    }
    return { kind: 'ip', text: raw.trim(), range, ports };
  }
  if (host.startsWith('*.')) {
    const suffix = normalizeHostName(host.slice(2));
    if (suffix === undefined || !suffix.includes('.')) {
      throw invalid('must be a wildcard below a domain of two or more labels, like *.example.com');
    }
    return { kind: 'wildcard', text: raw.trim(), suffix, ports };
  }
  const name = normalizeHostName(host);
  if (name === undefined) throw invalid('is not a host name, host:port, wildcard, IP or CIDR');
  return { kind: 'name', text: raw.trim(), name, ports };
}
