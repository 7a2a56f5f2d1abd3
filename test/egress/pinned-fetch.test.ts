import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:http';
import type { Server } from 'node:http';
import { createServer as createTlsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TLSSocket } from 'node:tls';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { pinnedFetch } from '../../src/egress/index.js';
import { until } from '../mcp/mcp-harness.js';
import { skipWithout } from '../helpers/prerequisites.js';
import { missingOpenssl, selfSignedCertificate } from '../helpers/certificates.js';

function closeServer(server: Server): Promise<void> {
  server.closeAllConnections();
  return new Promise((ok) => server.close(() => ok()));
}

describe('pinnedFetch', () => {
  let server: Server;
  let port: number;
  const seen: { url: string; host: string; closed: Promise<void> }[] = [];
  let sendSecond: () => void = () => undefined;

  beforeAll(async () => {
    server = createServer((req, res) => {
      const closed = new Promise<void>((ok) => res.once('close', () => ok()));
      seen.push({ url: req.url ?? '', host: req.headers.host ?? '', closed });
      if (req.url === '/events') {
        res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
        res.write('data: one\n\n');
        sendSecond = () => res.write('data: two\n\n');
      } else if (req.url === '/slow') {
        // Never answers: the client must give up.
      } else if (req.url === '/redirect') {
        res.writeHead(302, { location: 'http://elsewhere.test/steal' }).end();
      } else {
        res.writeHead(200, { 'content-type': 'text/plain' }).end('plain');
      }
    });
    await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok));
    port = (server.address() as AddressInfo).port;
  });
  afterEach(() => {
    seen.length = 0;
  });
  afterAll(async () => {
    await closeServer(server);
  });

  const pinned = () =>
    pinnedFetch({
      origin: new URL(`http://stream.test:${port}/`),
      addresses: [{ address: '127.0.0.1', family: 4 }],
    });

  it('streams a Server-Sent Events body event by event and ends it on abort', async () => {
    const f = pinned();
    try {
      const ac = new AbortController();
      const res = await f.fetch(`http://stream.test:${port}/events`, { signal: ac.signal });
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toBe('text/event-stream');
      const reader = res.body!.pipeThrough(new TextDecoderStream()).getReader();
      // The first event arrives while the server still holds the stream open.
      expect((await reader.read()).value).toBe('data: one\n\n');
      sendSecond();
      expect((await reader.read()).value).toBe('data: two\n\n');
      ac.abort();
      await expect(reader.read()).rejects.toMatchObject({ name: 'AbortError' });
      await seen[0]!.closed; // the server saw the stream end
      expect(seen.map((s) => s.host)).toEqual([`stream.test:${port}`]);
    } finally {
      f.close();
    }
  });

  it('aborts a request still waiting for its answer', async () => {
    const f = pinned();
    try {
      const ac = new AbortController();
      const pending = f.fetch(`http://stream.test:${port}/slow`, { signal: ac.signal });
      await until(() => seen.length === 1);
      ac.abort();
      await expect(pending).rejects.toMatchObject({ name: 'AbortError' });
      await seen[0]!.closed;
      // Aborted before it starts: nothing is sent.
      await expect(
        f.fetch(`http://stream.test:${port}/`, { signal: AbortSignal.abort() }),
      ).rejects.toMatchObject({ name: 'AbortError' });
      expect(seen).toHaveLength(1);
    } finally {
      f.close();
    }
  });

  it('refuses another origin, returns a redirect unfollowed, and fails once closed', async () => {
    const f = pinned();
    await expect(f.fetch(`http://elsewhere.test:${port}/`)).rejects.toThrow(
      /not the authorized upstream http:\/\/stream\.test:\d+/,
    );
    await expect(f.fetch(`https://stream.test:${port}/`)).rejects.toThrow(/not the authorized/);
    const res = await f.fetch(`http://stream.test:${port}/redirect`, { redirect: 'follow' });
    expect(res.status).toBe(302);
    expect(res.headers.get('location')).toBe('http://elsewhere.test/steal');
    expect(
      await (
        await f.fetch(`http://stream.test:${port}/plain`, { method: 'POST', body: 'x' })
      ).text(),
    ).toBe('plain');
    expect(seen.map((s) => s.url)).toEqual(['/redirect', '/plain']);
    f.close();
    await expect(f.fetch(`http://stream.test:${port}/plain`)).rejects.toThrow(/closed/);
    expect(seen).toHaveLength(2);
  });

  const noOpenssl = skipWithout('openssl', missingOpenssl());
  it.skipIf(noOpenssl)(
    'keeps the URL name for TLS (SNI, certificate check) and Host while connecting to the pinned address',
    async () => {
      const dir = mkdtempSync(join(tmpdir(), 'gatehouse-tls-'));
      try {
        const { cert, key } = selfSignedCertificate(dir, 'DNS:upstream.test');
        const names: unknown[] = [];
        const tls = createTlsServer({ key, cert }, (req, res) => {
          names.push((req.socket as TLSSocket).servername);
          res.end(req.headers.host);
        });
        await new Promise<void>((ok) => tls.listen(0, '127.0.0.1', ok));
        const tlsPort = (tls.address() as AddressInfo).port;
        const addresses = [{ address: '127.0.0.1', family: 4 as const }];
        try {
          const good = pinnedFetch({
            origin: new URL(`https://upstream.test:${tlsPort}`),
            addresses,
            ca: cert,
          });
          try {
            const res = await good.fetch(`https://upstream.test:${tlsPort}/mcp`);
            expect(await res.text()).toBe(`upstream.test:${tlsPort}`);
            expect(names).toEqual(['upstream.test']);
          } finally {
            good.close();
          }
          // The certificate is checked against the URL's name, not the address connected to.
          const wrong = pinnedFetch({
            origin: new URL(`https://other.test:${tlsPort}`),
            addresses,
            ca: cert,
          });
          try {
            await expect(wrong.fetch(`https://other.test:${tlsPort}/mcp`)).rejects.toThrow(
              /fetch failed: .*(altnames|other\.test)/,
            );
          } finally {
            wrong.close();
          }
        } finally {
          await closeServer(tls);
        }
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    },
  );
});
