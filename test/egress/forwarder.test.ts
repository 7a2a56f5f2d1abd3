import { execFile, spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { connect, createServer } from 'node:net';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EgressProxy } from '../../src/egress/index.js';
import type { EgressLease } from '../../src/egress/index.js';
import { freePort } from '../helpers/ports.js';
import { missingCommand, skipWithout } from '../helpers/prerequisites.js';
import { startOrigin } from './fixtures.js';
import type { Started } from './fixtures.js';

const SOCAT = '/usr/bin/socat';
const CURL = ['/usr/bin/curl', '/usr/local/bin/curl'].find((p) => existsSync(p));
const missing = missingCommand(SOCAT) ?? (CURL === undefined ? 'curl is not installed' : null);

/**
 * The sandbox's view: a socat forwarder maps 127.0.0.1:<port> to the lease's Unix socket, and a
 * stock client uses the standard proxy variables. Here the forwarder runs on the host, which is
 * the same path minus the namespaces (the bwrap tests cover those).
 */
describe.skipIf(skipWithout('socat and curl', missing))(
  'egress through a real socat forwarder and curl',
  () => {
    let dir: string;
    let proxy: EgressProxy;
    let lease: EgressLease;
    let origin: Started;
    let tls: Started & { firstBytes: () => number[] };
    let socat: ChildProcess;
    let proxyUrl: string;

    beforeAll(async () => {
      dir = await mkdtemp(join(tmpdir(), 'gh-egress-fwd-'));
      origin = await startOrigin();
      tls = await startTlsSniffer();
      proxy = new EgressProxy({
        dir: join(dir, 'sockets'),
        resolve: (host) =>
          host === 'origin.test' || host === 'secure.test'
            ? Promise.resolve(['127.0.0.1'])
            : Promise.reject(Object.assign(new Error('no'), { code: 'ENOTFOUND' })),
      });
      lease = await proxy.open('lease-fwd', [
        `origin.test:${origin.port}`,
        `127.0.0.1:${origin.port}`,
        `secure.test:${tls.port}`,
        `127.0.0.1:${tls.port}`,
      ]);
      const port = await freePort();
      socat = spawn(
        SOCAT,
        [`TCP-LISTEN:${port},bind=127.0.0.1,fork,reuseaddr`, `UNIX-CONNECT:${lease.socketPath}`],
        { stdio: 'ignore' },
      );
      await waitForPort(port);
      proxyUrl = `http://127.0.0.1:${port}`;
    });

    afterAll(async () => {
      socat?.kill();
      await proxy?.close();
      await origin?.close();
      await tls?.close();
      await rm(dir, { recursive: true, force: true });
    });

    /** curl with only the proxy variables a sandboxed tool would see. */
    const curl = (args: string[]): Promise<{ code: number; stdout: string; stderr: string }> =>
      new Promise((resolve) => {
        execFile(
          CURL!,
          ['-sS', '--max-time', '10', ...args],
          {
            env: {
              PATH: '/usr/bin:/bin',
              // curl reads only the lower-case http_proxy (httpoxy); both cases are set in sandboxes.
              http_proxy: proxyUrl,
              HTTP_PROXY: proxyUrl,
              https_proxy: proxyUrl,
              HTTPS_PROXY: proxyUrl,
              NO_PROXY: '',
            },
          },
          (err, stdout, stderr) => {
            const code = err === null ? 0 : typeof err.code === 'number' ? err.code : -1;
            resolve({ code, stdout, stderr });
          },
        );
      });

    it('plain HTTP via http_proxy reaches a listed host; the proxy resolved the name', async () => {
      const { code, stdout } = await curl([`http://origin.test:${origin.port}/hello`]);
      expect(code).toBe(0);
      expect(JSON.parse(stdout)).toMatchObject({
        url: '/hello',
        headers: { host: `origin.test:${origin.port}` },
      });
      expect(lease.decisions().at(-1)).toMatchObject({
        method: 'GET',
        host: 'origin.test',
        allowed: true,
        address: '127.0.0.1',
      });
    });

    it('HTTPS via HTTPS_PROXY tunnels with CONNECT: the TLS ClientHello reaches the target', async () => {
      const { code } = await curl([`https://secure.test:${tls.port}/`]);
      // The target is not a TLS server, so curl fails after the tunnel, during the handshake.
      expect(code).not.toBe(0);
      expect(tls.firstBytes()[0]).toBe(0x16);
      expect(lease.decisions().at(-1)).toMatchObject({
        method: 'CONNECT',
        host: 'secure.test',
        port: tls.port,
        allowed: true,
      });
    });

    it('a host not listed is refused: 403 for plain HTTP, a failed CONNECT for HTTPS', async () => {
      const plain = await curl(['-o', '/dev/null', '-w', '%{http_code}', 'http://evil.test/']);
      expect(plain.stdout).toBe('403');
      const https = await curl(['https://evil.test/']);
      expect(https.code).toBe(56);
      expect(https.stderr).toContain('403');
      expect(
        lease
          .decisions()
          .slice(-2)
          .map((d) => [d.method, d.host, d.allowed]),
      ).toEqual([
        ['GET', 'evil.test', false],
        ['CONNECT', 'evil.test', false],
      ]);
    });
  },
);

/** A TCP server that keeps the first bytes each connection sends, then hangs up. */
function startTlsSniffer(): Promise<Started & { firstBytes: () => number[] }> {
  let first: number[] = [];
  const server = createServer((s) => {
    s.on('error', () => {});
    s.once('data', (c: Buffer) => {
      first = [...c.subarray(0, 8)];
      s.destroy();
    });
  });
  return new Promise((resolve) => {
    server.listen(0, '127.0.0.1', () =>
      resolve({
        port: (server.address() as AddressInfo).port,
        firstBytes: () => first,
        close: () => new Promise((done) => server.close(() => done())),
      }),
    );
  });
}

async function waitForPort(port: number): Promise<void> {
  for (let i = 0; i < 100; i++) {
    const ok = await new Promise<boolean>((resolve) => {
      const s = connect({ host: '127.0.0.1', port });
      s.once('connect', () => {
        s.destroy();
        resolve(true);
      });
      s.once('error', () => resolve(false));
    });
    if (ok) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`socat did not listen on 127.0.0.1:${port}`);
}
