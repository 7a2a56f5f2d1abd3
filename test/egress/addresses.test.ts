import { describe, expect, it } from 'vitest';
import {
  formatIp,
  looksLikeIpv4,
  parseIp,
  parseIpRange,
  rangeContains,
  specialRange,
} from '../../src/egress/ip-address.js';
import { EgressAllowList } from '../../src/egress/allow-list.js';
import { parseConnectTarget, parseHttpTarget } from '../../src/egress/target.js';
import type { EgressTarget } from '../../src/egress/target.js';

const ip = (text: string) => {
  const parsed = parseIp(text);
  if (parsed === undefined) throw new Error(`not an IP: ${text}`);
  return parsed;
};

describe('IP addresses', () => {
  it.each([
    ['127.0.0.1', '127.0.0.1'],
    ['::1', '::1'],
    ['0:0:0:0:0:0:0:1', '::1'],
    ['::ffff:127.0.0.1', '127.0.0.1'],
    ['::FFFF:7f00:1', '127.0.0.1'],
    ['2001:DB8:0:0:1:0:0:1', '2001:db8::1:0:0:1'],
    ['64:ff9b::10.0.0.1', '64:ff9b::a00:1'],
  ])('parses %s to the standard form %s', (text, standard) => {
    expect(formatIp(ip(text))).toBe(standard);
  });

  it.each([
    '2130706433',
    '0x7f.1',
    '0177.0.0.1',
    '127.1',
    '127.0.0.01',
    '256.0.0.1',
    'fe80::1%eth0',
  ])('does not parse the non-standard %s', (text) => {
    expect(parseIp(text)).toBeUndefined();
  });

  it('tells which names read as IPv4 to inet_aton or WHATWG URL', () => {
    for (const host of ['2130706433', '0x7f.1', '0x7F000001', '1.2.3', 'a.b.0x']) {
      expect(looksLikeIpv4(host)).toBe(true);
    }
    for (const host of ['github.com', '1.2.3.com', '0x7f.example']) {
      expect(looksLikeIpv4(host)).toBe(false);
    }
  });

  it.each([
    ['0.1.2.3', '"this network"'],
    ['10.255.0.1', 'private'],
    ['100.127.255.255', 'carrier-grade NAT'],
    ['127.8.8.8', 'loopback'],
    ['169.254.169.254', 'metadata'],
    ['172.31.0.1', 'private'],
    ['192.168.1.1', 'private'],
    ['198.19.0.1', 'benchmarking'],
    ['239.1.1.1', 'multicast'],
    ['255.255.255.255', 'broadcast'],
    ['::', 'unspecified'],
    ['::1', 'loopback'],
    ['::ffff:10.0.0.1', 'private'],
    ['::ffff:169.254.169.254', 'link-local'],
    ['fc00::1', 'unique-local'],
    ['fdff::1', 'unique-local'],
    ['fe80::1', 'link-local'],
    ['ff02::1', 'multicast'],
    ['2001:db8::1', 'documentation'],
    ['2002:7f00:1::', '6to4'],
    ['64:ff9b::127.0.0.1', 'NAT64 of loopback'],
    ['::127.0.0.1', 'IPv4-compatible'],
    ['4000::1', 'not global unicast'],
  ])('classifies %s as non-public (%s)', (text, label) => {
    expect(specialRange(ip(text))).toContain(label);
  });

  it.each([
    '8.8.8.8',
    '140.82.112.3',
    '100.128.0.1',
    '172.32.0.1',
    '2606:4700::1111',
    '64:ff9b::8.8.8.8',
  ])('classifies %s as public', (text) => {
    expect(specialRange(ip(text))).toBeUndefined();
  });

  it('matches CIDR ranges bit by bit, IPv4-mapped ranges included', () => {
    const range = parseIpRange('100.64.0.0/10')!;
    expect(rangeContains(range, ip('100.127.1.1'))).toBe(true);
    expect(rangeContains(range, ip('100.128.0.0'))).toBe(false);
    expect(rangeContains(parseIpRange('fd00::/8')!, ip('fd12::1'))).toBe(true);
    expect(rangeContains(parseIpRange('fd00::/8')!, ip('fe00::1'))).toBe(false);
    expect(rangeContains(parseIpRange('::ffff:10.0.0.0/104')!, ip('10.2.3.4'))).toBe(true);
    expect(parseIpRange('10.0.0.0/33')).toBeUndefined();
    expect(parseIpRange('10.0.0.0/x')).toBeUndefined();
  });
});

describe('request targets', () => {
  it('parses CONNECT authorities, bracketed IPv6 included', () => {
    expect(parseConnectTarget('GitHub.COM.:443')).toEqual({
      ok: true,
      target: { host: 'github.com', port: 443 },
    });
    expect(parseConnectTarget('[::1]:8443')).toMatchObject({
      ok: true,
      target: { host: '::1', port: 8443, literal: { family: 6 } },
    });
    expect(parseConnectTarget('0x7f.1:443')).toMatchObject({ target: { literal: 'legacy' } });
    for (const bad of [
      'github.com',
      'github.com:0',
      'github.com:65536',
      ':443',
      'a..b:443',
      '[::1',
    ]) {
      expect(parseConnectTarget(bad).ok).toBe(false);
    }
  });

  it('says why a target is malformed without quoting any of it', () => {
    // A sandboxed tool chooses this text; it may hold a secret, or a part no redactor knows.
    const secret = 'Zq7secretPart';
    const cases: [string, RegExp][] = [
      [
        `${'x.'.repeat(45)}${secret}!:443`,
        /^malformed host name \(104 characters, .*character 104 /,
      ],
      [`a.${'b'.repeat(64)}${secret}.c:443`, /label 2 is longer than 63 characters/],
      [`-${secret}:443`, /starts or ends with -/],
      [`${secret}..b:443`, /label 2 is empty/],
      [`[${secret}]:443`, /^malformed IPv6 literal \(15 characters, not quoted\)$/],
      [`${secret}:1:2`, /^malformed host and port \(17 characters, not quoted; /],
    ];
    for (const [authority, why] of cases) {
      const parsed = parseConnectTarget(authority);
      if (parsed.ok) throw new Error(`${authority} parsed`);
      expect(parsed.reason, authority).toMatch(why);
      expect(parsed.reason.toLowerCase(), authority).not.toMatch(/zq7|secret|part|xxx|bbb/);
    }
    const http = parseHttpTarget(`http://${secret}!/path`);
    expect(http.ok || http.reason).toMatch(/^malformed host name \(14 characters/);
  });

  it('parses absolute-form http:// URLs into host, port and origin-form path', () => {
    expect(parseHttpTarget('http://example.com')).toMatchObject({
      target: { host: 'example.com', port: 80, path: '/' },
    });
    expect(parseHttpTarget('HTTP://Example.com:8080?x=1')).toMatchObject({
      target: { host: 'example.com', port: 8080, path: '/?x=1' },
    });
    expect(parseHttpTarget('http://[::1]:81/a#frag')).toMatchObject({
      target: { host: '::1', port: 81, path: '/a' },
    });
    expect(parseHttpTarget('/relative')).toMatchObject({ ok: false });
    expect(parseHttpTarget('http://user@example.com/')).toMatchObject({ ok: false });
  });
});

describe('EgressAllowList', () => {
  const target = (authority: string): EgressTarget => {
    const parsed = parseConnectTarget(authority);
    if (!parsed.ok) throw new Error(parsed.reason);
    return parsed.target;
  };
  const list = EgressAllowList.parse([
    'github.com',
    'dev.azure.com:443',
    '*.nuget.org',
    '10.0.0.0/8:5432',
    '[fd00::/8]:443',
    '2606:4700::1111',
  ]);

  it.each([
    ['github.com:443', true],
    ['github.com:80', true],
    ['github.com:22', false],
    ['GITHUB.com.:443', true],
    ['api.github.com:443', false],
    ['dev.azure.com:443', true],
    ['dev.azure.com:80', false],
    ['api.nuget.org:443', true],
    ['a.b.nuget.org:80', true],
    ['nuget.org:443', false],
    ['evilnuget.org:443', false],
    ['10.1.2.3:5432', true],
    ['10.1.2.3:443', false],
    ['11.0.0.1:5432', false],
    ['[fd12::1]:443', true],
    ['[::ffff:10.0.0.1]:5432', true],
    ['[2606:4700::1111]:443', true],
    ['[2606:4700::1111]:22', false],
    ['2130706433:443', false],
  ])('judges %s → %s', (authority, allowed) => {
    expect(list.checkHost(target(authority)).allowed).toBe(allowed);
  });

  it('lists a long allow-list only in part in its reason', () => {
    const many = EgressAllowList.parse(Array.from({ length: 12 }, (_, i) => `h${i}.example.com`));
    const verdict = many.checkHost(target('evil.example:443'));
    expect(verdict).toEqual({
      allowed: false,
      reason:
        'host evil.example is not in the egress allow-list of this lease: h0.example.com, h1.example.com, h2.example.com, h3.example.com, h4.example.com, h5.example.com, h6.example.com, h7.example.com, … (4 more)',
    });
  });
});
