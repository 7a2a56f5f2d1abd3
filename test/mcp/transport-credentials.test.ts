import { describe, expect, it } from 'vitest';
import { isGatehouseError } from '../../src/core/index.js';
import { normalizeTransport } from '../../src/mcp/mcp-input.js';
import type { McpTransport } from '../../src/mcp/mcp-server.js';

/** Registers an HTTP server at `url` with one header credential injected as `inject`. */
function register(url: string, inject: Record<string, unknown>): McpTransport | string {
  try {
    return normalizeTransport(
      {
        type: 'http',
        url,
        credentials: [{ ref: 'k', scope: 's', inject: { header: 'X-Key', ...inject } }],
      },
      () => null,
    );
  } catch (err) {
    if (!isGatehouseError(err)) throw err;
    return err.message;
  }
}

describe('registering an HTTP MCP server with a header credential', () => {
  it('refuses a header bound to another origin than the server: another port, or cleartext', () => {
    expect(register('http://127.0.0.1:8080/mcp', { origin: 'http://127.0.0.1:8081' })).toMatch(
      /credentials\/0\/inject is bound to http:\/\/127\.0\.0\.1:8081, but the server is at http:\/\/127\.0\.0\.1:8080/,
    );
    // A host alone means https on 443.
    expect(register('http://mcp.example.com/mcp', { host: 'mcp.example.com' })).toMatch(
      /bound to https:\/\/mcp\.example\.com:443, but the server is at http:\/\/mcp\.example\.com:80/,
    );
  });

  it('accepts a header bound to the server’s origin in any spelling, or to none', () => {
    for (const [url, inject] of [
      ['https://mcp.example.com/mcp', { host: 'mcp.example.com' }],
      ['http://127.0.0.1:8080/mcp', { origin: 'http://127.0.0.1:8080/' }],
      ['https://MCP.example.com.:443/mcp', { origin: 'https://mcp.example.com' }],
      ['http://127.0.0.1:8080/mcp', {}],
    ] as const)
      expect(typeof register(url, inject)).toBe('object');
  });
});
