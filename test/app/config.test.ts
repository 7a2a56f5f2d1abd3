import { describe, expect, it } from 'vitest';
import { isGatehouseError } from '../../src/core/index.js';
import { loadConfig } from '../../src/app/index.js';

const load = (env: NodeJS.ProcessEnv) => () =>
  loadConfig({ dataDir: '/tmp/gatehouse-config-test' }, env);

describe('configuration from the environment', () => {
  it('reads the egress allow-list, trimmed, empty entries dropped', () => {
    const config = load({ GATEHOUSE_EGRESS_ALLOW: ' github.com, ,127.0.0.1:8080,*.example.com' })();
    expect(config.sandbox.egressAllow).toEqual(['github.com', '127.0.0.1:8080', '*.example.com']);
  });

  it('refuses a malformed allow-list entry at start, naming it', () => {
    let err: unknown;
    try {
      load({ GATEHOUSE_EGRESS_ALLOW: 'github.com,bad host!:80' })();
    } catch (e) {
      err = e;
    }
    expect(isGatehouseError(err) && err.code).toBe('INVALID_INPUT');
    expect((err as Error).message).toMatch(/^GATEHOUSE_EGRESS_ALLOW: .*"bad host!:80"/);
  });

  it('reads the database URL and its pool size, and refuses a pool of none', () => {
    const config = load({ GATEHOUSE_DB: 'postgres://db.internal/gh', GATEHOUSE_DB_POOL: '4' })();
    expect(config.db).toBe('postgres://db.internal/gh');
    expect(config.dbPoolSize).toBe(4);
    expect(load({ GATEHOUSE_DB_POOL: '0' })).toThrow(
      /GATEHOUSE_DB_POOL must be an integer in 1–1000/,
    );
    expect(load({ GATEHOUSE_DB_POOL: 'ten' })).toThrow(/GATEHOUSE_DB_POOL must be/);
  });

  it('reads the node heartbeat and grace period, and refuses a grace shorter than two heartbeats', () => {
    expect(load({})().node).toEqual({ heartbeatMs: 5_000, graceMs: 30_000 });
    const config = load({ GATEHOUSE_NODE_HEARTBEAT_MS: '500', GATEHOUSE_NODE_GRACE_MS: '3000' })();
    expect(config.node).toEqual({ heartbeatMs: 500, graceMs: 3_000 });
    expect(load({ GATEHOUSE_NODE_HEARTBEAT_MS: '50' })).toThrow(
      /GATEHOUSE_NODE_HEARTBEAT_MS must be an integer in 100–3600000/,
    );
    expect(load({ GATEHOUSE_NODE_GRACE_MS: '9000' })).toThrow(
      /GATEHOUSE_NODE_GRACE_MS must be at least twice GATEHOUSE_NODE_HEARTBEAT_MS \(10000\)/,
    );
    expect(load({ GATEHOUSE_NODE_GRACE_MS: '30s' })).toThrow(/GATEHOUSE_NODE_GRACE_MS must be/);
  });

  it('reads the MCP forwarding, stream and message bounds, defaulting each, and refuses zero', () => {
    const config = load({
      GATEHOUSE_MCP_FORWARD_MAX_BYTES: '2048',
      GATEHOUSE_MCP_FORWARD_MAX_PER_CALL: '2',
      GATEHOUSE_MCP_STREAM_TTL_MS: '1000',
      GATEHOUSE_MCP_MAX_MESSAGE_BYTES: '1048576',
    })();
    expect(config.mcp).toEqual({
      forwarding: { maxBytes: 2048, maxPerCall: 2, timeoutMs: 60_000 },
      streams: { events: 256, bytes: 1024 * 1024, ttlMs: 1000 },
      maxMessageBytes: 1024 * 1024,
    });
    expect(load({})().mcp.maxMessageBytes).toBe(4 * 1024 * 1024);
    expect(load({ GATEHOUSE_MCP_FORWARD_TIMEOUT_MS: '0' })).toThrow(
      /GATEHOUSE_MCP_FORWARD_TIMEOUT_MS must be a positive integer; got 0/,
    );
    expect(load({ GATEHOUSE_MCP_STREAM_EVENTS: '-1' })).toThrow(
      /GATEHOUSE_MCP_STREAM_EVENTS must be a positive integer; got "-1"/,
    );
  });

  it('refuses a pool setting that is not a number', () => {
    expect(load({ GATEHOUSE_POOL: 'cpus=many' })).toThrow(
      /GATEHOUSE_POOL cpus must be a non-negative number/,
    );
  });

  it('reads the warm sandbox pool (off by default) and refuses a bad setting, naming it', () => {
    expect(load({})().sandbox.warm).toEqual({ size: 0, refill: 1, memoryMb: 512, egress: true });
    expect(
      load({ GATEHOUSE_SANDBOX_WARM: 'size=4,refill=2,memoryMb=128,egress=off' })().sandbox.warm,
    ).toEqual({ size: 4, refill: 2, memoryMb: 128, egress: false });
    expect(load({ GATEHOUSE_SANDBOX_WARM: 'size=1000' })).toThrow(
      /GATEHOUSE_SANDBOX_WARM size must be a whole number from 0 to 64/,
    );
    expect(load({ GATEHOUSE_SANDBOX_WARM: 'size=2,egress=maybe' })).toThrow(
      /GATEHOUSE_SANDBOX_WARM egress must be on or off/,
    );
    expect(load({ GATEHOUSE_SANDBOX_WARM: 'sise=2' })).toThrow(/unknown key "sise"/);
  });

  it('reads the public URL, allowed hosts and origins, and trusted proxies, lower case and trimmed', () => {
    const config = load({
      GATEHOUSE_PUBLIC_URL: 'https://Gatehouse.Example.com/',
      GATEHOUSE_ALLOWED_HOSTS: ' MCP.example.com, ,mcp.example.com:8443,[::1]:9000',
      GATEHOUSE_ALLOWED_ORIGINS: 'https://App.example.com/',
      GATEHOUSE_TRUSTED_PROXIES: '10.0.0.0/8, ::1,loopback',
    })();
    expect(config.reach).toEqual({
      publicUrl: 'https://gatehouse.example.com',
      allowedHosts: ['mcp.example.com', 'mcp.example.com:8443', '[::1]:9000'],
      allowedOrigins: ['https://app.example.com'],
      trustedProxies: ['10.0.0.0/8', '::1', 'loopback'],
    });
    // A flag wins over its variable.
    const flagged = loadConfig(
      { dataDir: '/tmp/gatehouse-config-test', reach: { allowedHosts: 'flag.example.com' } },
      { GATEHOUSE_ALLOWED_HOSTS: 'env.example.com' },
    );
    expect(flagged.reach.allowedHosts).toEqual(['flag.example.com']);
    expect(load({})().reach).toEqual({
      publicUrl: null,
      allowedHosts: [],
      allowedOrigins: [],
      trustedProxies: [],
    });
  });

  it('refuses a reach setting that does not parse, naming the variable, the entry and the form', () => {
    const bad: [NodeJS.ProcessEnv, RegExp][] = [
      [
        { GATEHOUSE_PUBLIC_URL: 'gatehouse.example.com' },
        /^GATEHOUSE_PUBLIC_URL .*must be an http or https URL/,
      ],
      [
        { GATEHOUSE_PUBLIC_URL: 'ftp://x.example.com' },
        /^GATEHOUSE_PUBLIC_URL .*without credentials/,
      ],
      [{ GATEHOUSE_PUBLIC_URL: 'https://x.example.com/?a=1' }, /^GATEHOUSE_PUBLIC_URL /],
      [
        { GATEHOUSE_ALLOWED_HOSTS: 'ok.example.com,http://x.example.com' },
        /^GATEHOUSE_ALLOWED_HOSTS .*"http:\/\/x\.example\.com" is not a host name/,
      ],
      [
        { GATEHOUSE_ALLOWED_HOSTS: 'x.example.com:99999' },
        /"x\.example\.com:99999" is not a host name/,
      ],
      [
        { GATEHOUSE_ALLOWED_ORIGINS: 'https://app.example.com/path' },
        /^GATEHOUSE_ALLOWED_ORIGINS .*"https:\/\/app\.example\.com\/path" is not an origin/,
      ],
      [{ GATEHOUSE_ALLOWED_ORIGINS: '*' }, /"\*" is not an origin/],
      [
        { GATEHOUSE_TRUSTED_PROXIES: 'proxy.example.com' },
        /^GATEHOUSE_TRUSTED_PROXIES .*"proxy\.example\.com" is not an address/,
      ],
      [{ GATEHOUSE_TRUSTED_PROXIES: '10.0.0.0/33' }, /"10\.0\.0\.0\/33" is not an address/],
    ];
    for (const [env, message] of bad) {
      let err: unknown;
      try {
        load(env)();
      } catch (e) {
        err = e;
      }
      expect(isGatehouseError(err) && err.code, JSON.stringify(env)).toBe('INVALID_INPUT');
      expect((err as Error).message).toMatch(message);
    }
  });
});
