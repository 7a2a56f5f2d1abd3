import { request } from 'node:http';
import type { IncomingHttpHeaders } from 'node:http';
import type { Client } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDemoGateway } from '../helpers/gateway-fixture.js';
import type { DemoGateway } from '../helpers/gateway-fixture.js';
import { connectMcp, parseRpc } from '../helpers/mcp-client.js';
import { startReverseProxy } from '../helpers/reverse-proxy.js';
import type { ReverseProxy } from '../helpers/reverse-proxy.js';

/**
 * `/mcp` behind a real reverse proxy on loopback that forwards with another `Host` (or sets
 * `X-Forwarded-Host`), as nginx in front of a deployed gateway does.
 */
let deployed: DemoGateway;
let plain: DemoGateway;
const proxies: ReverseProxy[] = [];
const clients: Client[] = [];

beforeAll(async () => {
  deployed = await startDemoGateway({
    listen: true,
    config: {
      reach: {
        publicUrl: 'https://mcp.example.test/',
        allowedHosts: 'gatehouse.test',
        allowedOrigins: 'https://app.example.test',
        trustedProxies: 'loopback',
      },
    },
  });
  plain = await startDemoGateway({ listen: true });
});
afterAll(async () => {
  await Promise.allSettled(clients.map((c) => c.close()));
  await Promise.allSettled(proxies.map((p) => p.close()));
  await deployed?.close();
  await plain?.close();
});

/** A proxy in front of `g` that sets the headers given (a null value removes one). */
async function proxyTo(
  g: DemoGateway,
  set: Record<string, string | ((own: string) => string)>,
): Promise<string> {
  const own = new URL(g.url!).host;
  const proxy = await startReverseProxy(g.url!, (headers) => {
    const out: IncomingHttpHeaders = { ...headers };
    for (const [k, v] of Object.entries(set)) out[k] = typeof v === 'string' ? v : v(own);
    return out;
  });
  proxies.push(proxy);
  return `${proxy.url}/mcp`;
}

async function connect(url: string, g: DemoGateway): Promise<Client> {
  const { client } = await connectMcp(url, g.tokens.agent);
  clients.push(client);
  return client;
}

/** A raw initialize POSTed to `url` with extra headers. */
function rawInitialize(
  url: string,
  g: DemoGateway,
  headers: Record<string, string> = {},
): Promise<{ status: number; body: { error?: { message: string } } }> {
  const u = new URL(url);
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: u.hostname,
        port: u.port,
        path: u.pathname,
        method: 'POST',
        headers: {
          authorization: `Bearer ${g.tokens.agent}`,
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
          ...headers,
        },
      },
      (res) => {
        let data = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => (data += c));
        res.on('end', () =>
          resolve({
            status: res.statusCode ?? 0,
            body: parseRpc(data, res.headers['content-type']) as { error?: never },
          }),
        );
      },
    );
    req.on('error', reject);
    req.end(
      JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'initialize',
        params: {
          protocolVersion: '2025-06-18',
          capabilities: {},
          clientInfo: { name: 'raw', version: '1' },
        },
      }),
    );
  });
}

describe('/mcp behind a reverse proxy that forwards another Host', () => {
  it('initializes and lists tools through the proxy when the host is allowed', async () => {
    const url = await proxyTo(deployed, { host: 'gatehouse.test' });
    const client = await connect(url, deployed);
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name)).toContain('demo_echo__1_0_0');
    expect(client.getServerVersion()?.name).toBe('gatehouse');
  });

  it('accepts the public URL’s host, on any port the proxy names', async () => {
    const url = await proxyTo(deployed, { host: 'mcp.example.test:443' });
    const client = await connect(url, deployed);
    expect((await client.listTools()).tools.length).toBeGreaterThan(0);
  });

  it('refuses a host that is not allowed with 403, naming it and the setting', async () => {
    const url = await proxyTo(deployed, { host: 'other.test' });
    await expect(connect(url, deployed)).rejects.toThrow(/other\.test/);
    const refused = await rawInitialize(url, deployed);
    expect(refused.status).toBe(403);
    expect(refused.body.error?.message).toMatch(
      /^Host "other\.test" is not a name this gateway serves \/mcp under .*GATEHOUSE_PUBLIC_URL.*GATEHOUSE_ALLOWED_HOSTS/,
    );
    // Without configuration only the local names pass: the same proxy host is refused.
    const unconfigured = await proxyTo(plain, { host: 'gatehouse.test' });
    expect((await rawInitialize(unconfigured, plain)).status).toBe(403);
  });

  it('checks X-Forwarded-Host from a trusted proxy, and ignores it from anyone else', async () => {
    const forward = (host: string) => ({ host: (own: string) => own, 'x-forwarded-host': host });
    // A trusted proxy (loopback) keeps the gateway's own Host and names the client's in X-Forwarded-Host.
    const client = await connect(await proxyTo(deployed, forward('mcp.example.test')), deployed);
    expect((await client.listTools()).tools.length).toBeGreaterThan(0);
    const refused = await rawInitialize(await proxyTo(deployed, forward('evil.test')), deployed);
    expect(refused.status).toBe(403);
    expect(refused.body.error?.message).toMatch(
      /^X-Forwarded-Host \(from a trusted proxy\) "evil\.test" is not a name/,
    );
    // A gateway that trusts no proxy reads the Host it was sent (its own), not the header.
    const ignored = await rawInitialize(await proxyTo(plain, forward('evil.test')), plain);
    expect(ignored.status).toBe(200);
  });

  it('accepts the public URL’s origin, an allowed origin and the request’s own; refuses another', async () => {
    const url = await proxyTo(deployed, {
      host: 'gatehouse.test',
      'x-forwarded-proto': 'https',
    });
    for (const origin of [
      'https://mcp.example.test',
      'https://app.example.test',
      'https://gatehouse.test',
    ]) {
      expect((await rawInitialize(url, deployed, { origin })).status, origin).toBe(200);
    }
    const refused = await rawInitialize(url, deployed, { origin: 'http://gatehouse.test' });
    expect(refused.status).toBe(403);
    expect(refused.body.error?.message).toMatch(
      /^Origin "http:\/\/gatehouse\.test" may not call \/mcp .*GATEHOUSE_ALLOWED_ORIGINS/,
    );
  });
});
