import { mkdtemp, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import {
  ErrorCode,
  IllegalStateError,
  headersForOrigin,
  isGatehouseError,
} from '../../src/core/index.js';
import { EgressProxy } from '../../src/egress/index.js';
import { byteTextRedactor } from '../../src/secrets/index.js';
import type { EgressDecision } from '../../src/egress/index.js';
import { freePort } from '../helpers/ports.js';
import {
  closed,
  connectThrough,
  getThrough,
  rawExchange,
  roundTrip,
  startEcho,
  startOrigin,
} from './fixtures.js';
import type { Started } from './fixtures.js';

const T0 = Date.UTC(2026, 0, 1);

let echo: Started & { connections: () => number };
let origin: Awaited<ReturnType<typeof startOrigin>>;
let dir: string;
let proxy: EgressProxy;
let names: Record<string, string[]>;
let lookups: string[];
let tick: number;

beforeAll(async () => {
  echo = await startEcho();
  origin = await startOrigin();
});
afterAll(async () => {
  await echo.close();
  await origin.close();
});

beforeEach(async () => {
  dir = join(await mkdtemp(join(tmpdir(), 'gh-egress-')), 'sockets');
  names = {};
  lookups = [];
  tick = 0;
  proxy = new EgressProxy({
    dir,
    now: () => T0 + 1000 * tick++,
    resolve: (host) => {
      lookups.push(host);
      const found = names[host];
      if (found === undefined) {
        return Promise.reject(Object.assign(new Error('not found'), { code: 'ENOTFOUND' }));
      }
      return Promise.resolve(found);
    },
  });
});
afterEach(async () => {
  await proxy.close();
  await rm(join(dir, '..'), { recursive: true, force: true });
});

describe('EgressProxy: CONNECT', () => {
  it('tunnels bytes both ways to a listed 127.0.0.1:port and records the address', async () => {
    const lease = await proxy.open('lease-1', [`127.0.0.1:${echo.port}`]);
    const tunnel = await connectThrough(lease.socketPath, `127.0.0.1:${echo.port}`);
    expect(tunnel.status).toBe(200);
    expect(await roundTrip(tunnel.socket, 'ping through the tunnel')).toBe(
      'ping through the tunnel',
    );
    expect(await roundTrip(tunnel.socket, 'and again')).toBe('and again');
    tunnel.socket.destroy();
    expect(lease.decisions()).toEqual([
      {
        at: new Date(T0).toISOString(),
        method: 'CONNECT',
        host: '127.0.0.1',
        port: echo.port,
        allowed: true,
        reason: `allowed by egress allow-list entry "127.0.0.1:${echo.port}"`,
        address: '127.0.0.1',
      },
    ]);
    expect(lookups).toEqual([]);
  });

  it('refuses a host not in the allow-list with 403, without a DNS lookup, and records why', async () => {
    const seen: EgressDecision[] = [];
    const lease = await proxy.open('lease-1', ['github.com', 'dev.azure.com'], (d) => seen.push(d));
    const before = echo.connections();
    const tunnel = await connectThrough(lease.socketPath, 'evil.example:443');
    expect(tunnel.status).toBe(403);
    const reason =
      'host evil.example is not in the egress allow-list of this lease: github.com, dev.azure.com';
    expect(tunnel.body.trim()).toBe(reason);
    expect(lease.decisions()).toMatchObject([
      { method: 'CONNECT', host: 'evil.example', port: 443, allowed: false, reason },
    ]);
    expect(lease.decisions()[0]).not.toHaveProperty('address');
    expect(seen).toEqual(lease.decisions());
    expect(lookups).toEqual([]);
    expect(echo.connections()).toBe(before);
  });

  it('compares host names case-insensitively and without a trailing dot', async () => {
    names['internal.test'] = ['127.0.0.1'];
    const lease = await proxy.open('lease-1', [
      `Internal.Test.:${echo.port}`,
      `127.0.0.1:${echo.port}`,
    ]);
    const tunnel = await connectThrough(lease.socketPath, `INTERNAL.test.:${echo.port}`);
    expect(tunnel.status).toBe(200);
    tunnel.socket.destroy();
    expect(lease.decisions()[0]).toMatchObject({ host: 'internal.test', allowed: true });
  });

  it.each([
    ['127.0.0.1', 'loopback (127.0.0.0/8)'],
    ['10.0.0.5', 'private (10.0.0.0/8)'],
    ['169.254.169.254', 'link-local'],
    ['100.64.1.1', 'carrier-grade NAT'],
    ['::1', 'loopback (::1/128)'],
    ['::ffff:127.0.0.1', 'loopback (127.0.0.0/8)'],
    ['fd12::1', 'unique-local (fc00::/7)'],
    ['224.0.0.1', 'multicast'],
    ['0.0.0.0', '"this network"'],
  ])('refuses a listed name that resolves to %s', async (address, label) => {
    names['internal.test'] = [address];
    const lease = await proxy.open('lease-1', [`internal.test:${echo.port}`]);
    const before = echo.connections();
    const tunnel = await connectThrough(lease.socketPath, `internal.test:${echo.port}`);
    expect(tunnel.status).toBe(403);
    expect(tunnel.body).toContain('host internal.test resolves to');
    expect(tunnel.body).toContain(label);
    expect(lease.decisions()).toMatchObject([{ host: 'internal.test', allowed: false }]);
    expect(echo.connections()).toBe(before);
  });

  it('refuses a name when any of its addresses is private, even if another is public', async () => {
    names['mixed.test'] = ['93.184.216.34', '10.1.2.3'];
    const lease = await proxy.open('lease-1', ['mixed.test']);
    const tunnel = await connectThrough(lease.socketPath, 'mixed.test:443');
    expect(tunnel.status).toBe(403);
    expect(tunnel.body).toContain('resolves to 10.1.2.3, a private (10.0.0.0/8) address');
    expect(tunnel.body).toContain(`add "10.1.2.3:443"`);
  });

  it.each(['127.0.0.1', '::ffff:127.0.0.1'])(
    'allows a name resolving to %s when 127.0.0.1:port is listed too',
    async (address) => {
      names['internal.test'] = [address];
      const lease = await proxy.open('lease-1', [
        `internal.test:${echo.port}`,
        `127.0.0.1:${echo.port}`,
      ]);
      const tunnel = await connectThrough(lease.socketPath, `internal.test:${echo.port}`);
      expect(tunnel.status).toBe(200);
      expect(await roundTrip(tunnel.socket, 'hi')).toBe('hi');
      tunnel.socket.destroy();
      expect(lease.decisions()).toMatchObject([
        { host: 'internal.test', allowed: true, address: '127.0.0.1' },
      ]);
    },
  );

  it('connects to the address it checked and never resolves twice (DNS rebinding)', async () => {
    let calls = 0;
    const rebinding = new EgressProxy({
      dir,
      resolve: () => Promise.resolve(calls++ === 0 ? ['127.0.0.1'] : ['10.9.9.9']),
    });
    try {
      const lease = await rebinding.open('lease-r', [
        `rebind.test:${echo.port}`,
        `127.0.0.1:${echo.port}`,
      ]);
      const tunnel = await connectThrough(lease.socketPath, `rebind.test:${echo.port}`);
      expect(tunnel.status).toBe(200);
      expect(await roundTrip(tunnel.socket, 'x')).toBe('x');
      tunnel.socket.destroy();
      expect(calls).toBe(1);
      expect(lease.decisions()[0]?.address).toBe('127.0.0.1');
    } finally {
      await rebinding.close();
    }
  });

  it.each([
    '2130706433',
    '0x7f.1',
    '0x7f000001',
    '0177.0.0.1',
    '127.1',
    '127.0.0.01',
    '127.0.0.1.1',
  ])(
    'refuses the non-standard IP literal %s even though 127.0.0.1:port is listed',
    async (host) => {
      const lease = await proxy.open('lease-1', [`127.0.0.1:${echo.port}`]);
      const before = echo.connections();
      const tunnel = await connectThrough(lease.socketPath, `${host}:${echo.port}`);
      expect(tunnel.status).toBe(403);
      expect(tunnel.body).toContain('non-standard form');
      expect(lease.decisions()).toMatchObject([{ host, allowed: false }]);
      expect(lookups).toEqual([]);
      expect(echo.connections()).toBe(before);
    },
  );

  it.each([
    ['127.0.0.1:443', 'IP address 127.0.0.1 is not in the egress allow-list'],
    ['169.254.169.254:80', 'IP address 169.254.169.254 is not in the egress allow-list'],
    ['8.8.8.8:443', 'IP address 8.8.8.8 is not in the egress allow-list'],
    ['[::1]:443', 'IP address ::1 is not in the egress allow-list'],
    ['[::ffff:a9fe:a9fe]:80', 'IP address 169.254.169.254 is not in the egress allow-list'],
  ])('refuses the unlisted IP literal %s', async (authority, reason) => {
    const lease = await proxy.open('lease-1', ['github.com']);
    const tunnel = await connectThrough(lease.socketPath, authority);
    expect(tunnel.status).toBe(403);
    expect(tunnel.body).toContain(reason);
    expect(lookups).toEqual([]);
  });

  it('allows an IP literal covered by a listed CIDR on the listed port', async () => {
    const lease = await proxy.open('lease-1', [`127.0.0.0/8:${echo.port}`]);
    const tunnel = await connectThrough(lease.socketPath, `127.0.0.1:${echo.port}`);
    expect(tunnel.status).toBe(200);
    tunnel.socket.destroy();
    expect(lease.decisions()[0]).toMatchObject({
      allowed: true,
      reason: `allowed by egress allow-list entry "127.0.0.0/8:${echo.port}"`,
    });
  });

  it('refuses a port the entry does not allow', async () => {
    names['github.com'] = ['140.82.112.3'];
    const lease = await proxy.open('lease-1', ['github.com', `127.0.0.1:${echo.port}`]);
    const ssh = await connectThrough(lease.socketPath, 'github.com:22');
    expect(ssh.status).toBe(403);
    expect(ssh.body.trim()).toBe(
      `port 22 of github.com is not allowed by this lease's egress allow-list (entry "github.com" allows ports 443 and 80)`,
    );
    const other = await connectThrough(lease.socketPath, `127.0.0.1:${echo.port + 1}`);
    expect(other.status).toBe(403);
    expect(other.body).toContain(`entry "127.0.0.1:${echo.port}" allows port ${echo.port}`);
    expect(lookups).toEqual([]);
  });

  it('matches *.example.com below the domain only', async () => {
    names['api.internal.test'] = ['127.0.0.1'];
    const lease = await proxy.open('lease-1', [
      `*.internal.test:${echo.port}`,
      `127.0.0.1:${echo.port}`,
    ]);
    const sub = await connectThrough(lease.socketPath, `api.internal.test:${echo.port}`);
    expect(sub.status).toBe(200);
    sub.socket.destroy();
    const apex = await connectThrough(lease.socketPath, `internal.test:${echo.port}`);
    expect(apex.status).toBe(403);
    const suffix = await connectThrough(lease.socketPath, `evilinternal.test:${echo.port}`);
    expect(suffix.status).toBe(403);
  });

  it('answers 502 and records the failure when the upstream refuses the connection', async () => {
    const port = await freePort();
    const lease = await proxy.open('lease-1', [`127.0.0.1:${port}`]);
    const tunnel = await connectThrough(lease.socketPath, `127.0.0.1:${port}`);
    expect(tunnel.status).toBe(502);
    expect(lease.decisions()).toMatchObject([{ allowed: true }]);
    expect(lease.decisions()[0]?.reason).toContain(
      'the connection failed (127.0.0.1: ECONNREFUSED)',
    );
  });

  it('answers 502 when the name does not resolve', async () => {
    const lease = await proxy.open('lease-1', ['nowhere.test']);
    const tunnel = await connectThrough(lease.socketPath, 'nowhere.test:443');
    expect(tunnel.status).toBe(502);
    expect(tunnel.body.trim()).toBe('could not resolve host nowhere.test (ENOTFOUND)');
    expect(lease.decisions()).toMatchObject([{ allowed: false, host: 'nowhere.test' }]);
  });
});

describe('EgressProxy: plain HTTP', () => {
  it('forwards an absolute-form GET to a listed 127.0.0.1:port, with Host from the target', async () => {
    const lease = await proxy.open('lease-1', [`127.0.0.1:${origin.port}`]);
    const res = await getThrough(lease.socketPath, `http://127.0.0.1:${origin.port}/path?q=1`, {
      host: 'metadata.google.internal',
      'proxy-authorization': 'Basic c2VjcmV0',
      'x-tool': 'kept',
    });
    expect(res.status).toBe(200);
    expect(res.headers['x-origin']).toBe('yes');
    const seen = JSON.parse(res.body) as { url: string; headers: Record<string, string> };
    expect(seen.url).toBe('/path?q=1');
    expect(seen.headers.host).toBe(`127.0.0.1:${origin.port}`);
    expect(seen.headers['x-tool']).toBe('kept');
    expect(seen.headers).not.toHaveProperty('proxy-authorization');
    expect(lease.decisions()).toMatchObject([
      { method: 'GET', host: '127.0.0.1', port: origin.port, allowed: true, address: '127.0.0.1' },
    ]);
  });

  it('refuses a GET to a host or port not listed, and the origin sees nothing', async () => {
    names['evil.test'] = ['127.0.0.1'];
    const lease = await proxy.open('lease-1', [`127.0.0.1:${origin.port}`]);
    const before = origin.seen.length;
    const host = await getThrough(lease.socketPath, `http://evil.test:${origin.port}/`);
    expect(host.status).toBe(403);
    expect(host.body).toContain('host evil.test is not in the egress allow-list');
    const port = await getThrough(lease.socketPath, `http://127.0.0.1:${origin.port + 1}/`);
    expect(port.status).toBe(403);
    const literal = await getThrough(lease.socketPath, `http://2130706433:${origin.port}/`);
    expect(literal.status).toBe(403);
    expect(origin.seen.length).toBe(before);
    expect(lease.decisions().map((d) => [d.method, d.host, d.allowed])).toEqual([
      ['GET', 'evil.test', false],
      ['GET', '127.0.0.1', false],
      ['GET', '2130706433', false],
    ]);
  });

  it('adds injected headers to plain-HTTP requests, replacing the client’s, and never records them', async () => {
    const lease = await proxy.open('lease-1', [`127.0.0.1:${origin.port}`], undefined, {
      // Given the exact origin of the request: plain http, its port explicit.
      injectHeaders: (o): Record<string, string> =>
        o === `http://127.0.0.1:${origin.port}` ? { Authorization: 'Bearer brokered' } : {},
    });
    const res = await getThrough(lease.socketPath, `http://127.0.0.1:${origin.port}/`, {
      authorization: 'Bearer forged',
    });
    const seen = JSON.parse(res.body) as { headers: Record<string, string> };
    expect(seen.headers.authorization).toBe('Bearer brokered');
    expect(JSON.stringify(lease.decisions())).not.toContain('Bearer');
  });

  it('tells injectHeaders the exact origin: case and a trailing dot folded, the port explicit, always http', async () => {
    names['internal.test'] = ['127.0.0.1'];
    const origins: string[] = [];
    const bound = [
      { origin: `http://internal.test:${origin.port}`, name: 'X-Here', value: 'here' },
      // What `host: internal.test` binds: https on 443, never this cleartext port.
      { origin: 'https://internal.test:443', name: 'Authorization', value: 'Bearer tls-only' },
    ];
    const lease = await proxy.open(
      'lease-1',
      [`internal.test:${origin.port}`, `127.0.0.1:${origin.port}`],
      undefined,
      {
        injectHeaders: (o) => {
          origins.push(o);
          return headersForOrigin(bound, o);
        },
      },
    );
    const res = await getThrough(lease.socketPath, `http://INTERNAL.Test.:${origin.port}/`);
    expect(res.status).toBe(200);
    expect(origins).toEqual([`http://internal.test:${origin.port}`]);
    const seen = origin.seen.at(-1)!.headers;
    expect(seen['x-here']).toBe('here');
    expect(seen.authorization).toBeUndefined();
  });

  it('scrubs the brokered value from the answer (headers and body, every form) and withholds a compressed one', async () => {
    const value = 'brokered-value-4d1f';
    const lease = await proxy.open('lease-1', [`127.0.0.1:${origin.port}`], undefined, {
      injectHeaders: (): Record<string, string> => ({ Authorization: `Bearer ${value}` }),
      scrub: byteTextRedactor([{ name: 'api-key', value }]),
    });
    const res = await getThrough(lease.socketPath, `http://127.0.0.1:${origin.port}/`, {
      'x-note': Buffer.from(value).toString('base64'),
    });
    // The upstream got the credential, and asked for nothing compressed…
    expect(origin.seen.at(-1)!.headers.authorization).toBe(`Bearer ${value}`);
    expect(origin.seen.at(-1)!.headers['accept-encoding']).toBe('identity');
    // …and what it echoed (plain in a header and the body, base64 in the body) never comes back.
    expect(res.status).toBe(200);
    expect(JSON.stringify(res.headers)).not.toContain(value);
    expect(res.headers['x-echo-authorization']).toBe('Bearer [REDACTED:brokered:api-key]');
    expect(res.body).not.toContain(value);
    expect(res.body).not.toContain(Buffer.from(value).toString('base64'));
    expect(JSON.parse(res.body)).toMatchObject({
      headers: { authorization: 'Bearer [REDACTED:brokered:api-key]' },
    });

    const gz = await getThrough(lease.socketPath, `http://127.0.0.1:${origin.port}/gzip`);
    expect(gz.status).toBe(502);
    expect(gz.body).toMatch(/content-encoding gzip.*withheld/);
  });

  it('forwards a request body and the method', async () => {
    const lease = await proxy.open('lease-1', [`127.0.0.1:${origin.port}`]);
    const res = await new Promise<string>((resolve, reject) => {
      void import('node:http').then(({ request }) => {
        const req = request(
          {
            socketPath: lease.socketPath,
            method: 'POST',
            path: `http://127.0.0.1:${origin.port}/p`,
          },
          (r) => {
            let body = '';
            r.on('data', (c: Buffer) => (body += c.toString()));
            r.on('end', () => resolve(body));
          },
        );
        req.on('error', reject);
        req.end('the body');
      });
    });
    expect(JSON.parse(res)).toMatchObject({ method: 'POST', url: '/p', body: 'the body' });
    expect(JSON.stringify(lease.decisions())).not.toContain('the body');
  });
});

describe('EgressProxy: malformed requests', () => {
  it.each([
    ['garbage', 'NOT HTTP AT ALL\r\n\r\n', 'HTTP/1.1 400'],
    ['CONNECT without a port', 'CONNECT github.com HTTP/1.1\r\n\r\n', 'HTTP/1.1 400'],
    ['a zoned IPv6 literal', 'CONNECT [fe80::1%25eth0]:443 HTTP/1.1\r\n\r\n', 'HTTP/1.1 400'],
    ['CONNECT with a bad host', 'CONNECT exa$mple.com:443 HTTP/1.1\r\n\r\n', 'HTTP/1.1 400'],
    ['origin-form GET', 'GET / HTTP/1.1\r\nHost: github.com\r\n\r\n', 'HTTP/1.1 400'],
    ['https:// GET', 'GET https://github.com/ HTTP/1.1\r\nHost: x\r\n\r\n', 'HTTP/1.1 400'],
    ['user info', 'GET http://u:p@github.com/ HTTP/1.1\r\nHost: x\r\n\r\n', 'HTTP/1.1 400'],
    [
      'a huge header',
      `GET http://github.com/ HTTP/1.1\r\nX: ${'a'.repeat(20_000)}\r\n\r\n`,
      'HTTP/1.1 431',
    ],
  ])('answers %s with an error status and records it', async (_, bytes, status) => {
    const lease = await proxy.open('lease-1', ['github.com']);
    const answer = await rawExchange(lease.socketPath, bytes);
    expect(answer.startsWith(status)).toBe(true);
    expect(lease.decisions()).toHaveLength(1);
    expect(lease.decisions()[0]).toMatchObject({ allowed: false });
    expect(lookups).toEqual([]);
  });

  it('refuses a malformed allow-list entry when the lease opens', async () => {
    for (const entry of ['github.com:99999', '*', '*.com', '0x7f.1', '10.0.0.0/33', 'a b']) {
      const err: unknown = await proxy.open('lease-x', [entry]).catch((e: unknown) => e);
      expect(isGatehouseError(err, ErrorCode.INVALID_INPUT)).toBe(true);
      expect((err as Error).message).toContain(entry);
    }
  });
});

describe('EgressProxy: lifecycle and records', () => {
  it('records decisions in order, with times from the injected clock', async () => {
    names['github.com'] = ['140.82.112.3'];
    const lease = await proxy.open('lease-1', [
      `127.0.0.1:${echo.port}`,
      `127.0.0.1:${origin.port}`,
    ]);
    const a = await connectThrough(lease.socketPath, `127.0.0.1:${echo.port}`);
    a.socket.destroy();
    await connectThrough(lease.socketPath, 'github.com:443');
    await getThrough(lease.socketPath, `http://127.0.0.1:${origin.port}/`);
    await connectThrough(lease.socketPath, `127.0.0.1:${echo.port + 7}`);
    expect(lease.decisions()).toEqual([
      expect.objectContaining({ at: new Date(T0).toISOString(), method: 'CONNECT', allowed: true }),
      expect.objectContaining({
        at: new Date(T0 + 1000).toISOString(),
        host: 'github.com',
        allowed: false,
        reason: expect.stringContaining(
          'host github.com is not in the egress allow-list',
        ) as string,
      }),
      expect.objectContaining({
        at: new Date(T0 + 2000).toISOString(),
        method: 'GET',
        allowed: true,
      }),
      expect.objectContaining({
        at: new Date(T0 + 3000).toISOString(),
        port: echo.port + 7,
        allowed: false,
        reason: expect.stringContaining(`port ${echo.port + 7} of 127.0.0.1`) as string,
      }),
    ]);
  });

  it('close() ends open tunnels, removes the socket, and is safe twice', async () => {
    const lease = await proxy.open('lease-1', [`127.0.0.1:${echo.port}`]);
    const tunnel = await connectThrough(lease.socketPath, `127.0.0.1:${echo.port}`);
    expect(await roundTrip(tunnel.socket, 'open')).toBe('open');
    await lease.close();
    await closed(tunnel.socket);
    await lease.close();
    await expect(stat(lease.socketPath)).rejects.toMatchObject({ code: 'ENOENT' });
    // The id is free again; its socket is named at random, never by the lease.
    const again = await proxy.open('lease-1', []);
    expect(again.socketPath).not.toBe(lease.socketPath);
    expect(again.socketPath).not.toContain('lease-1');
  });

  it('ends a tunnel that stays idle past the idle timeout', async () => {
    const quick = new EgressProxy({ dir, limits: { idleTimeoutMs: 100 } });
    try {
      const lease = await quick.open('lease-idle', [`127.0.0.1:${echo.port}`]);
      const tunnel = await connectThrough(lease.socketPath, `127.0.0.1:${echo.port}`);
      expect(await roundTrip(tunnel.socket, 'alive')).toBe('alive');
      await closed(tunnel.socket);
      expect(tunnel.socket.destroyed).toBe(true);
    } finally {
      await quick.close();
    }
  });

  it('proxy.close() closes every lease and refuses new ones', async () => {
    const lease = await proxy.open('lease-1', [`127.0.0.1:${echo.port}`]);
    const tunnel = await connectThrough(lease.socketPath, `127.0.0.1:${echo.port}`);
    await proxy.close();
    await closed(tunnel.socket);
    await proxy.close();
    await expect(proxy.open('lease-2', [])).rejects.toBeInstanceOf(IllegalStateError);
  });

  it('refuses a second endpoint for the same lease and a lease id that is not a file name', async () => {
    await proxy.open('lease-1', []);
    await expect(proxy.open('lease-1', [])).rejects.toBeInstanceOf(IllegalStateError);
    const err: unknown = await proxy.open('../escape', []).catch((e: unknown) => e);
    expect(isGatehouseError(err, ErrorCode.INVALID_INPUT)).toBe(true);
  });

  it('creates the socket 0666 inside a 0700 directory', async () => {
    const lease = await proxy.open('lease-1', []);
    const socket = await stat(lease.socketPath);
    expect(socket.isSocket()).toBe(true);
    expect(socket.mode & 0o777).toBe(0o666);
    expect(dirname(lease.socketPath)).toBe(dir);
    expect(lease.socketPath).toMatch(/\/[A-Za-z0-9_-]{12}\.sock$/);
    expect((await stat(dir)).mode & 0o777).toBe(0o700);
  });

  it('an empty allow-list refuses everything and says so', async () => {
    const lease = await proxy.open('lease-1', []);
    const tunnel = await connectThrough(lease.socketPath, 'github.com:443');
    expect(tunnel.status).toBe(403);
    expect(tunnel.body).toContain('it is empty: this lease allows no egress');
  });
});
