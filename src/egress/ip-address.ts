import { isIPv4, isIPv6 } from 'node:net';

/** An IP address as bytes: 4 for IPv4, 16 for IPv6. */
export interface IpAddress {
  readonly family: 4 | 6;
  readonly bytes: Uint8Array;
}

/** A range of addresses: the first `prefix` bits of `base`. */
export interface IpRange {
  readonly base: IpAddress;
  readonly prefix: number;
}

/**
 * Parses an IP literal in its standard form only: dotted-decimal IPv4 without leading zeros, or
 * IPv6 (RFC 4291 text, an embedded dotted IPv4 tail allowed) without a zone. An IPv4-mapped IPv6
 * address (`::ffff:127.0.0.1`) comes back as the IPv4 address it maps, so both spellings are judged
 * alike. Returns `undefined` for anything else, including legacy IPv4 forms (see
 * {@link looksLikeIpv4}).
 */
export function parseIp(text: string): IpAddress | undefined {
  if (isIPv4(text)) return { family: 4, bytes: Uint8Array.from(text.split('.').map(Number)) };
  const bytes = parseIpv6(text);
  if (bytes === undefined) return undefined;
  const mapped = bytes.subarray(0, 12).every((b, i) => b === (i < 10 ? 0 : 0xff));
  return mapped ? { family: 4, bytes: bytes.slice(12) } : { family: 6, bytes };
}

function parseIpv6(text: string): Uint8Array | undefined {
  if (!isIPv6(text) || text.includes('%')) return undefined;
  const groups = (part: string): string[] =>
    part === ''
      ? []
      : part.split(':').flatMap((g) => {
          if (!g.includes('.')) return [g];
          const [a = 0, b = 0, c = 0, d = 0] = g.split('.').map(Number);
          return [((a << 8) | b).toString(16), ((c << 8) | d).toString(16)];
        });
  const gap = text.indexOf('::');
  const left = groups(gap < 0 ? text : text.slice(0, gap));
  const right = gap < 0 ? [] : groups(text.slice(gap + 2));
  const missing = 8 - left.length - right.length;
  if (missing < 0 || (gap < 0 && missing !== 0)) return undefined;
  const all = [...left, ...Array<string>(missing).fill('0'), ...right];
  const bytes = new Uint8Array(16);
  all.forEach((g, i) => {
    const v = parseInt(g, 16);
    bytes[2 * i] = v >> 8;
    bytes[2 * i + 1] = v & 0xff;
  });
  return bytes;
}

/**
 * True when a host name would be read as an IPv4 address by `inet_aton` or the WHATWG URL parser:
 * its last label is all digits or `0x` hex (`2130706433`, `0x7f.1`, `0177.0.0.1`, `1.2.3`). Such a
 * name is an IP literal, whatever its form; no DNS name ends in a numeric label.
 */
export function looksLikeIpv4(host: string): boolean {
  const last = host.split('.').at(-1) ?? '';
  return /^(?:\d+|0x[0-9a-f]*)$/i.test(last);
}

/** The standard text of an address: dotted-decimal, or RFC 5952 compressed IPv6. */
export function formatIp(ip: IpAddress): string {
  if (ip.family === 4) return Array.from(ip.bytes).join('.');
  const groups = Array.from(
    { length: 8 },
    (_, i) => (ip.bytes[2 * i]! << 8) | ip.bytes[2 * i + 1]!,
  );
  let best = { at: -1, len: 1 };
  for (let i = 0; i < 8;) {
    let j = i;
    while (j < 8 && groups[j] === 0) j++;
    if (j - i > best.len) best = { at: i, len: j - i };
    i = j === i ? i + 1 : j;
  }
  const hex = groups.map((g) => g.toString(16));
  if (best.at < 0) return hex.join(':');
  return `${hex.slice(0, best.at).join(':')}::${hex.slice(best.at + best.len).join(':')}`;
}

/** Parses `address/prefix` (or a bare address, a range of one). Standard forms only. */
export function parseIpRange(text: string): IpRange | undefined {
  const slash = text.indexOf('/');
  const base = parseIp(slash < 0 ? text : text.slice(0, slash));
  if (base === undefined) return undefined;
  const max = base.family === 4 ? 32 : 128;
  if (slash < 0) return { base, prefix: max };
  const prefixText = text.slice(slash + 1);
  if (!/^\d{1,3}$/.test(prefixText)) return undefined;
  // A mapped IPv6 range (::ffff:10.0.0.0/104) was turned into IPv4; its prefix shrinks by 96.
  const given = Number(prefixText);
  const prefix = base.family === 4 && text.includes(':') ? given - 96 : given;
  return prefix >= 0 && prefix <= max ? { base, prefix } : undefined;
}

/** True when `ip` is inside `range` (same family, first `prefix` bits equal). */
export function rangeContains(range: IpRange, ip: IpAddress): boolean {
  if (range.base.family !== ip.family) return false;
  for (let bit = 0; bit < range.prefix; bit += 8) {
    const mask = range.prefix - bit >= 8 ? 0xff : (0xff << (8 - (range.prefix - bit))) & 0xff;
    if ((range.base.bytes[bit / 8]! & mask) !== (ip.bytes[bit / 8]! & mask)) return false;
  }
  return true;
}

function ranges(table: [string, string][]): { range: IpRange; label: string }[] {
  return table.map(([text, label]) => ({
    range: parseIpRange(text)!,
    label: `${label} (${text})`,
  }));
}

const SPECIAL_V4 = ranges([
  ['0.0.0.0/8', '"this network"'],
  ['10.0.0.0/8', 'private'],
  ['100.64.0.0/10', 'shared carrier-grade NAT'],
  ['127.0.0.0/8', 'loopback'],
  ['169.254.0.0/16', 'link-local, incl. the cloud metadata address 169.254.169.254'],
  ['172.16.0.0/12', 'private'],
  ['192.0.0.0/24', 'IETF protocol assignments'],
  ['192.0.2.0/24', 'documentation'],
  ['192.88.99.0/24', '6to4 relay anycast'],
  ['192.168.0.0/16', 'private'],
  ['198.18.0.0/15', 'benchmarking'],
  ['198.51.100.0/24', 'documentation'],
  ['203.0.113.0/24', 'documentation'],
  ['224.0.0.0/4', 'multicast'],
  ['240.0.0.0/4', 'reserved, incl. broadcast'],
]);

const SPECIAL_V6 = ranges([
  ['::/128', 'unspecified'],
  ['::1/128', 'loopback'],
  ['::/96', 'IPv4-compatible (deprecated)'],
  ['64:ff9b:1::/48', 'local-use NAT64'],
  ['100::/64', 'discard-only'],
  ['2001::/23', 'IETF protocol assignments, incl. Teredo'],
  ['2001:db8::/32', 'documentation'],
  ['2002::/16', '6to4'],
  ['3fff::/20', 'documentation'],
  ['5f00::/16', 'segment routing'],
  ['fc00::/7', 'unique-local'],
  ['fe80::/10', 'link-local'],
  ['fec0::/10', 'site-local (deprecated)'],
  ['ff00::/8', 'multicast'],
]);

const NAT64 = parseIpRange('64:ff9b::/96')!;
const GLOBAL_UNICAST = parseIpRange('2000::/3')!;

/**
 * Names the non-public range `ip` is in — private, loopback, link-local, CGNAT, unique-local,
 * multicast, documentation, reserved and the like — or `undefined` for a public unicast address.
 * IPv6 outside 2000::/3 is never public; a NAT64 address is judged by the IPv4 address it embeds.
 */
export function specialRange(ip: IpAddress): string | undefined {
  if (ip.family === 4) return SPECIAL_V4.find((s) => rangeContains(s.range, ip))?.label;
  if (rangeContains(NAT64, ip)) {
    const embedded = specialRange({ family: 4, bytes: ip.bytes.slice(12) });
    return embedded === undefined ? undefined : `NAT64 of ${embedded}`;
  }
  const special = SPECIAL_V6.find((s) => rangeContains(s.range, ip))?.label;
  if (special !== undefined) return special;
  return rangeContains(GLOBAL_UNICAST, ip) ? undefined : 'not global unicast (outside 2000::/3)';
}
