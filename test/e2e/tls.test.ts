import { readFileSync, writeFileSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { join } from 'node:path';
import type { TLSSocket } from 'node:tls';
import { describe, expect, it } from 'vitest';
import { runCli, useServers } from '../helpers/cli.js';
import { missingOpenssl, selfSignedCertificate } from '../helpers/certificates.js';
import { skipWithout } from '../helpers/prerequisites.js';

const servers = useServers();

interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
  fingerprint: string;
}

/** One HTTPS request on a fresh connection, trusting only `ca`. */
function get(
  url: string,
  ca: Buffer,
  o: { method?: string; token?: string } = {},
): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = httpsRequest(
      url,
      {
        method: o.method ?? 'GET',
        ca,
        agent: false,
        headers: o.token ? { authorization: `Bearer ${o.token}` } : {},
      },
      (res) => {
        const fingerprint = (res.socket as TLSSocket).getPeerCertificate().fingerprint256;
        let body = '';
        res.on('data', (d: Buffer) => (body += d.toString()));
        res.on('end', () =>
          resolve({ status: res.statusCode ?? 0, headers: res.headers, body, fingerprint }),
        );
      },
    );
    req.on('error', reject);
    req.end();
  });
}

/** Waits until `check` holds, polling every 50 ms for up to 10 s. */
async function until(check: () => boolean | Promise<boolean>): Promise<void> {
  for (let i = 0; i < 200; i++) {
    if (await check()) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error('condition not reached in 10 s');
}

describe.skipIf(skipWithout('openssl', missingOpenssl()))('gatehouse serve with TLS', () => {
  it('serves HTTPS only, with a Secure session cookie, to the CLI, and reloads its certificate on SIGHUP', async () => {
    const dir = servers.tempDir('gatehouse-tls-');
    const first = selfSignedCertificate(dir, 'IP:127.0.0.1', 'first');
    const dataDir = join(dir, 'data');
    const server = await servers.start(dataDir, 30_000, {
      GATEHOUSE_TLS_CERT: first.certFile,
      GATEHOUSE_TLS_KEY: first.keyFile,
    });
    expect(server.url).toMatch(/^https:\/\/127\.0\.0\.1:\d+$/);
    const tokens = JSON.parse(readFileSync(join(dataDir, 'demo-tokens.json'), 'utf8')) as Record<
      string,
      string
    >;

    const health = await get(`${server.url}/healthz`, first.cert);
    expect(health.status).toBe(200);

    // Plain HTTP on the TLS port gets no answer from the API.
    const plain = await new Promise<string>((resolve) => {
      const req = httpRequest(server.url.replace('https:', 'http:') + '/healthz', (res) =>
        resolve(`status ${res.statusCode}`),
      );
      req.on('error', (err) => resolve(`error ${err.message}`));
      req.end();
    });
    expect(plain).not.toBe('status 200');

    // Over TLS the Studio's session cookie is Secure.
    const session = await get(`${server.url}/v1/sessions`, first.cert, {
      method: 'POST',
      token: tokens.reviewer!,
    });
    expect(session.status, session.body).toBe(201);
    const cookie = [session.headers['set-cookie']].flat().join('\n');
    expect(cookie).toMatch(/HttpOnly/i);
    expect(cookie).toMatch(/;\s*Secure/i);
    expect(cookie).toMatch(/SameSite=Strict/i);

    // A stock client (the CLI, Node's fetch) that trusts the certificate calls a tool.
    const run = await runCli(['invoke', 'demo/echo@1.0.0', '--input', '{"message":"over tls"}'], {
      GATEHOUSE_URL: server.url,
      GATEHOUSE_TOKEN: tokens.agent!,
      NODE_EXTRA_CA_CERTS: first.certFile,
    });
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toContain('over tls');

    // A renewed certificate in the same files is served to new connections after SIGHUP.
    const second = selfSignedCertificate(dir, 'IP:127.0.0.1', 'second');
    writeFileSync(first.certFile, second.cert);
    writeFileSync(first.keyFile, second.key);
    server.child.kill('SIGHUP');
    await until(() => server.output().includes('TLS certificate reloaded'));
    const renewed = await get(`${server.url}/healthz`, second.cert);
    expect(renewed.status).toBe(200);
    expect(renewed.fingerprint).not.toBe(health.fingerprint);

    // A key that does not match is refused on reload; the renewed certificate stays.
    writeFileSync(first.keyFile, first.key);
    server.child.kill('SIGHUP');
    await until(() => server.output().includes('TLS certificate not reloaded'));
    expect(server.output()).toMatch(/cannot be used together/);
    expect((await get(`${server.url}/healthz`, second.cert)).fingerprint).toBe(renewed.fingerprint);
  });

  it('refuses to start with half a TLS setting, naming what is missing', async () => {
    const dir = servers.tempDir('gatehouse-tls-');
    const cert = selfSignedCertificate(dir, 'IP:127.0.0.1');
    const run = await runCli(['serve', '--data', join(dir, 'data'), '--port', '0'], {
      GATEHOUSE_TLS_CERT: cert.certFile,
    });
    expect(run.code).not.toBe(0);
    expect(run.stderr).toMatch(
      /GATEHOUSE_TLS_CERT \(--tls-cert\) is set but GATEHOUSE_TLS_KEY \(--tls-key\) is not/,
    );
  });
});
